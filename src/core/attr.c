#include "core/attr.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formula.h"

#define FIELD(obj, attr) ((char *)(obj) + (attr)->offset)
#define CFIELD(obj, attr) ((const char *)(obj) + (attr)->offset)
/* The map of keys the table does not know (ps_attr_table.custom_offset), or NULL. */
static struct ps_value *custom_of(const struct ps_attr_table *table, const void *obj)
{
    return table->custom_offset ? (struct ps_value *)((char *)obj + table->custom_offset) : NULL;
}
#define CUSTOM(table, obj) custom_of(table, obj)

static const char *const fifo_names[] = {"weight", "start_time", "pending_job_count"};

/* ---- lookup ------------------------------------------------------------------------------ */

const struct ps_attr *ps_attr_find(const struct ps_attr_table *table, const char *name)
{
    for (int i = 0; i < table->count; i++) {
        const struct ps_attr *a = &table->attrs[i];
        if (strcmp(a->name, name) == 0)
            return a;
        for (int k = 0; k < 3 && a->alias[k]; k++)
            if (strcmp(a->alias[k], name) == 0)
                return a;
    }
    return NULL;
}

int ps_edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return cap + 1;
    int row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0], best = (int)i;
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best)
                best = v;
        }
        if (best > cap)
            return cap + 1;
    }
    return row[lb];
}

/* The canonical name nearest to key when it is close enough to be a typo (at most 2 edits,
 * fewer than the key's length), else NULL. */
static const char *suggest(const struct ps_attr_table *table, const char *key)
{
    const char *best = NULL;
    int best_d = 3;
    for (int i = 0; i < table->count; i++) {
        const struct ps_attr *a = &table->attrs[i];
        for (int k = -1; k < 3 && (k < 0 || a->alias[k]); k++) {
            int d = ps_edit_distance(key, k < 0 ? a->name : a->alias[k], 2);
            if (d < best_d) {
                best_d = d;
                best = a->name;
            }
        }
    }
    return best && best_d < (int)strlen(key) ? best : NULL;
}

static int unknown_key(struct ps_error *err, const char *path, const char *key,
                       const struct ps_attr_table *table)
{
    const char *near = suggest(table, key);
    if (near)
        return ps_error_set(err, PS_EINVAL, "%s: unknown key of the %s (did you mean \"%s\"?)",
                            path, table->what, near);
    return ps_error_set(err, PS_EINVAL, "%s: unknown key of the %s", path, table->what);
}

/* Splits "a/b/c" into "a" (copied into head) and "b/c" (returned, NULL when none). */
static const char *split_path(const char *path, char *head, size_t size)
{
    const char *slash = strchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : strlen(path);
    if (n >= size)
        n = size - 1;
    memcpy(head, path, n);
    head[n] = '\0';
    return slash ? slash + 1 : NULL;
}

static int bad_value(struct ps_error *err, const char *key, const struct ps_value *v,
                     const char *reason)
{
    char text[128];
    return ps_error_set(err, PS_EINVAL, "%s: %s, got %s", key, reason,
                        ps_value_describe(v, text, sizeof text));
}

/* ---- the name a key was set with (ps_attr_table.spelling_offset) ------------------------- */

static unsigned char *spelling_of(const struct ps_attr_table *table, void *obj,
                                  const struct ps_attr *a)
{
    return table->spelling_offset
               ? (unsigned char *)obj + table->spelling_offset + (a - table->attrs)
               : NULL;
}

/* 1 for the canonical name (or a spelling of it), 2 + k for alias k. */
static unsigned char name_index(const struct ps_attr *a, const char *name)
{
    if (!(a->flags & PS_ATTR_SPELLINGS))
        for (int k = 0; k < 3 && a->alias[k]; k++)
            if (strcmp(a->alias[k], name) == 0)
                return (unsigned char)(2 + k);
    return 1;
}

static const char *spelled_name(const struct ps_attr *a, unsigned char n)
{
    return n >= 2 && n - 2 < 3 && a->alias[n - 2] ? a->alias[n - 2] : a->name;
}

/* Before the key at path of obj is set to value: refuses another name of a key set under one
 * (upstream's ValidateNoAliasClash), and records the name (or forgets it on a reset). */
static int respell(const struct ps_attr_table *table, void *obj, const char *path,
                   const struct ps_value *value, struct ps_error *err)
{
    char head[128];
    const char *rest = split_path(path, head, sizeof head);
    const struct ps_attr *a = ps_attr_find(table, head);
    unsigned char *s = a ? spelling_of(table, obj, a) : NULL;
    if (!s)
        return 0;
    if (!rest && (!value || value->type == PS_VALUE_NULL)) {
        *s = 0;
        return 0;
    }
    unsigned char n = name_index(a, head);
    if (*s && *s != n)
        return ps_error_set(err, PS_EINVAL,
                            "%s: attempt to set the same attribute with different alias "
                            "(previous alias \"%s\"; remove it first)",
                            head, spelled_name(a, *s));
    *s = n;
    return 0;
}

/* Refuses a map that names one attribute twice (canonical name and alias, or two aliases). */
static int check_aliases(const struct ps_attr_table *table, const struct ps_value *map,
                         const char *prefix, struct ps_error *err)
{
    for (int i = 0; i < map->count; i++) {
        const struct ps_attr *a = ps_attr_find(table, map->keys[i]);
        for (int j = 0; a && j < i; j++)
            if (ps_attr_find(table, map->keys[j]) == a)
                return ps_error_set(err, PS_EINVAL,
                                    "%s%s%s and %s: aliases of one key (%s), give only one",
                                    prefix, prefix[0] ? "/" : "", map->keys[j], map->keys[i],
                                    a->name);
    }
    return 0;
}

/* ---- per-kind helpers -------------------------------------------------------------------- */

static size_t kind_size(const struct ps_attr *a)
{
    switch (a->kind) {
    case PS_ATTR_BOOL: return sizeof(bool);
    case PS_ATTR_OPT_BOOL: return sizeof(struct ps_opt_bool);
    case PS_ATTR_INT: return sizeof(int64_t);
    case PS_ATTR_INT32: return sizeof(int);
    case PS_ATTR_OPT_INT: return sizeof(struct ps_opt_int);
    case PS_ATTR_DOUBLE: return sizeof(double);
    case PS_ATTR_OPT_DOUBLE: return sizeof(struct ps_opt_double);
    case PS_ATTR_STRING:
    case PS_ATTR_OPT_STRING: return sizeof(char *);
    case PS_ATTR_ENUM: return sizeof(int);
    case PS_ATTR_OPT_ENUM: return sizeof(struct ps_opt_int);
    case PS_ATTR_RESOURCES: return sizeof(struct ps_resources_opt);
    case PS_ATTR_FIFO_LIST: return sizeof(struct ps_fifo_list);
    case PS_ATTR_STRING_LIST: return sizeof(struct ps_string_list);
    case PS_ATTR_DOUBLE_LIST: return sizeof(struct ps_double_list);
    case PS_ATTR_GROUP: return a->group->size;
    case PS_ATTR_MAP: return sizeof(struct ps_value);
    case PS_ATTR_ACL: return sizeof(struct ps_acl);
    }
    return 0;
}

static void string_list_release(struct ps_string_list *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->items[i]);
    free(list->items);
    list->items = NULL;
    list->count = 0;
}

static void release_field(const struct ps_attr *a, void *field)
{
    switch (a->kind) {
    case PS_ATTR_STRING:
    case PS_ATTR_OPT_STRING:
        free(*(char **)field);
        *(char **)field = NULL;
        break;
    case PS_ATTR_STRING_LIST:
        string_list_release(field);
        break;
    case PS_ATTR_GROUP:
        ps_attr_release(a->group, field);
        break;
    case PS_ATTR_MAP:
        ps_value_release(field);
        break;
    case PS_ATTR_ACL:
        ps_acl_release(field);
        break;
    default:
        break;
    }
}

/* Zeroes every owned pointer of a shallow copy so that releasing it frees nothing twice. */
static void forget_owned(const struct ps_attr_table *table, void *obj)
{
    for (int i = 0; i < table->count; i++) {
        const struct ps_attr *a = &table->attrs[i];
        void *f = FIELD(obj, a);
        if (a->kind == PS_ATTR_STRING || a->kind == PS_ATTR_OPT_STRING)
            *(char **)f = NULL;
        else if (a->kind == PS_ATTR_STRING_LIST)
            memset(f, 0, sizeof(struct ps_string_list));
        else if (a->kind == PS_ATTR_GROUP)
            forget_owned(a->group, f);
        else if (a->kind == PS_ATTR_MAP)
            *(struct ps_value *)f = ps_value_null();
        else if (a->kind == PS_ATTR_ACL)
            memset(f, 0, sizeof(struct ps_acl));
    }
    if (CUSTOM(table, obj))
        *CUSTOM(table, obj) = ps_value_null();
}

static int copy_string_list(struct ps_string_list *dst, const struct ps_string_list *src)
{
    dst->count = 0;
    dst->items = NULL;
    if (src->count == 0)
        return 0;
    dst->items = calloc((size_t)src->count, sizeof *dst->items);
    if (!dst->items)
        return PS_ENOMEM;
    for (int i = 0; i < src->count; i++) {
        dst->items[i] = strdup(src->items[i]);
        dst->count = i + 1;
        if (!dst->items[i]) {
            string_list_release(dst);
            return PS_ENOMEM;
        }
    }
    return 0;
}

/* Deep-copies one field; dst holds nothing owned on entry and on failure. */
static int copy_field(const struct ps_attr *a, void *dst, const void *src)
{
    switch (a->kind) {
    case PS_ATTR_STRING:
    case PS_ATTR_OPT_STRING: {
        const char *s = *(char *const *)src;
        char *copy = s ? strdup(s) : NULL;
        if (s && !copy)
            return PS_ENOMEM;
        *(char **)dst = copy;
        return 0;
    }
    case PS_ATTR_STRING_LIST:
        return copy_string_list(dst, src);
    case PS_ATTR_GROUP:
        return ps_attr_copy(a->group, dst, src);
    case PS_ATTR_MAP:
        return ps_value_copy(dst, src);
    case PS_ATTR_ACL:
        return ps_acl_copy(dst, src);
    default:
        memcpy(dst, src, kind_size(a));
        return 0;
    }
}

int ps_attr_copy(const struct ps_attr_table *table, void *dst, const void *src)
{
    memcpy(dst, src, table->size);
    forget_owned(table, dst);
    for (int i = 0; i < table->count; i++) {
        const struct ps_attr *a = &table->attrs[i];
        if (a->kind != PS_ATTR_STRING && a->kind != PS_ATTR_OPT_STRING &&
            a->kind != PS_ATTR_STRING_LIST && a->kind != PS_ATTR_GROUP && a->kind != PS_ATTR_MAP &&
            a->kind != PS_ATTR_ACL)
            continue;
        int rc = copy_field(a, FIELD(dst, a), CFIELD(src, a));
        if (rc != 0) {
            ps_attr_release(table, dst);
            return rc;
        }
    }
    if (CUSTOM(table, dst) && ps_value_copy(CUSTOM(table, dst), CUSTOM(table, src)) != 0) {
        ps_attr_release(table, dst);
        return PS_ENOMEM;
    }
    return 0;
}

void ps_attr_release(const struct ps_attr_table *table, void *obj)
{
    for (int i = 0; i < table->count; i++)
        release_field(&table->attrs[i], FIELD(obj, &table->attrs[i]));
    if (CUSTOM(table, obj))
        ps_value_release(CUSTOM(table, obj));
}

/* ---- parsing one value into a field ------------------------------------------------------ */

static int check_number(const struct ps_attr *a, const char *key, const struct ps_value *v,
                        bool integer, struct ps_error *err)
{
    if (v->type != PS_VALUE_NUMBER)
        return bad_value(err, key, v, integer ? "must be an integer" : "must be a number");
    double x = v->number;
    if (!isfinite(x))
        return bad_value(err, key, v, "must be a finite number");
    if (integer && (x != floor(x) || fabs(x) > 9007199254740992.0))
        return bad_value(err, key, v, "must be an integer");
    if (a->flags & PS_ATTR_NO_RANGE)
        return 0;
    bool low_ok = (a->flags & PS_ATTR_MIN_OPEN) ? x > a->min : x >= a->min;
    bool high_ok = (a->flags & PS_ATTR_MAX_OPEN) ? x < a->max : x <= a->max;
    if (low_ok && high_ok)
        return 0;
    char reason[160];
    const char *lo = (a->flags & PS_ATTR_MIN_OPEN) ? "(" : "[";
    const char *hi = (a->flags & PS_ATTR_MAX_OPEN) ? ")" : "]";
    if (a->max >= 1e300)
        snprintf(reason, sizeof reason, "must be %s %.17g", (a->flags & PS_ATTR_MIN_OPEN) ? ">" : ">=",
                 a->min);
    else
        snprintf(reason, sizeof reason, "must be in %s%.17g, %.17g%s", lo, a->min, a->max, hi);
    return bad_value(err, key, v, reason);
}

static int parse_enum(const struct ps_attr *a, const char *key, const struct ps_value *v, int *out,
                      struct ps_error *err)
{
    if (v->type == PS_VALUE_STRING) {
        for (int i = 0; i < a->enum_count; i++) {
            if (strcmp(v->string, a->enum_names[i]) == 0) {
                *out = i;
                return 0;
            }
        }
    }
    char reason[200] = "must be one of";
    for (int i = 0; i < a->enum_count; i++) {
        size_t len = strlen(reason);
        snprintf(reason + len, sizeof reason - len, "%s %s", i ? "," : "", a->enum_names[i]);
    }
    return bad_value(err, key, v, reason);
}

static int parse_resource(const char *key, const char *name, const struct ps_value *v,
                          struct ps_resources_opt *res, struct ps_error *err)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", key, name);
    int r = ps_resource_from_name(name);
    if (r < 0)
        return ps_error_set(err, PS_EINVAL,
                            "%s: unknown resource \"%s\" (expected user_slots, cpu, gpu, memory or network)",
                            key, name);
    if (v->type == PS_VALUE_NULL) {
        res->set &= ~(1u << r);
        res->r.v[r] = 0;
        return 0;
    }
    bool integer = r != PS_RES_CPU;
    if (v->type != PS_VALUE_NUMBER || !isfinite(v->number))
        return bad_value(err, path, v, "must be a non-negative number");
    if (v->number < 0)
        return bad_value(err, path, v, "must be a non-negative number");
    if (integer && v->number != floor(v->number))
        return bad_value(err, path, v, "must be an integer");
    int64_t stored = ps_res_from_double(r, v->number);
    if (stored >= PS_RES_INFINITE)
        return bad_value(err, path, v, "is too large");
    res->r.v[r] = stored;
    res->set |= 1u << r;
    return 0;
}

static int parse_resources(const char *key, const struct ps_value *v, struct ps_resources_opt *out,
                           struct ps_error *err)
{
    if (v->type != PS_VALUE_MAP)
        return bad_value(err, key, v, "must be a map of resources");
    struct ps_resources_opt res;
    memset(&res, 0, sizeof res);
    for (int i = 0; i < v->count; i++) {
        int rc = parse_resource(key, v->keys[i], &v->items[i], &res, err);
        if (rc != 0)
            return rc;
    }
    *out = res;
    return 0;
}

static int parse_fifo(const char *key, const struct ps_value *v, struct ps_fifo_list *out,
                      struct ps_error *err)
{
    if (v->type != PS_VALUE_LIST)
        return bad_value(err, key, v, "must be a list of weight, start_time, pending_job_count");
    if (v->count == 0)
        return bad_value(err, key, v, "must not be empty");
    struct ps_fifo_list list = {0};
    for (int i = 0; i < v->count; i++) {
        const struct ps_value *item = &v->items[i];
        int found = -1;
        if (item->type == PS_VALUE_STRING) {
            for (int k = 0; k < PS_FIFO_PARAM_MAX; k++)
                if (strcmp(item->string, fifo_names[k]) == 0)
                    found = k;
            if (strcmp(item->string, "pending_allocation_count") == 0)
                found = PS_FIFO_PENDING_JOB_COUNT;
        }
        if (found < 0)
            return bad_value(err, key, item, "must be one of weight, start_time, pending_job_count");
        for (int k = 0; k < list.count; k++)
            if ((int)list.items[k] == found)
                return bad_value(err, key, item, "is listed twice");
        list.items[list.count++] = (enum ps_fifo_param)found;
    }
    *out = list;
    return 0;
}

static int parse_double_list(const struct ps_attr *a, const char *key, const struct ps_value *v,
                             struct ps_double_list *out, struct ps_error *err)
{
    if (v->type != PS_VALUE_LIST)
        return bad_value(err, key, v, "must be a list of numbers");
    if (v->count > PS_DOUBLE_LIST_MAX) {
        char reason[64];
        snprintf(reason, sizeof reason, "must have at most %d items", PS_DOUBLE_LIST_MAX);
        return bad_value(err, key, v, reason);
    }
    struct ps_double_list list = {0};
    for (int i = 0; i < v->count; i++) {
        int rc = check_number(a, key, &v->items[i], false, err);
        if (rc != 0)
            return rc;
        list.items[list.count++] = v->items[i].number;
    }
    *out = list;
    return 0;
}

static int check_string(const struct ps_attr *a, const char *key, const struct ps_value *v,
                        struct ps_error *err)
{
    if (v->type != PS_VALUE_STRING)
        return bad_value(err, key, v, "must be a string");
    if ((a->flags & PS_ATTR_NONEMPTY) && v->string[0] == '\0')
        return bad_value(err, key, v, "must not be empty");
    if (a->check)
        return a->check(key, v->string, err);
    return 0;
}

static int parse_string_list(const struct ps_attr *a, const char *key, const struct ps_value *v,
                             struct ps_string_list *out, struct ps_error *err)
{
    if (v->type != PS_VALUE_LIST)
        return bad_value(err, key, v, "must be a list of strings");
    if ((a->flags & PS_ATTR_NONEMPTY) && v->count == 0)
        return bad_value(err, key, v, "must not be empty");
    for (int i = 0; i < v->count; i++) {
        if (v->items[i].type != PS_VALUE_STRING)
            return bad_value(err, key, &v->items[i], "must be a string");
        if (v->items[i].string[0] == '\0')
            return bad_value(err, key, &v->items[i], "must not be empty");
        if (a->check) {
            int rc = a->check(key, v->items[i].string, err);
            if (rc != 0)
                return rc;
        }
    }
    struct ps_string_list list = {0};
    if (v->count > 0) {
        list.items = calloc((size_t)v->count, sizeof *list.items);
        if (!list.items)
            return PS_ENOMEM;
        for (int i = 0; i < v->count; i++) {
            list.items[i] = strdup(v->items[i].string);
            list.count = i + 1;
            if (!list.items[i]) {
                string_list_release(&list);
                return PS_ENOMEM;
            }
        }
    }
    *out = list;
    return 0;
}

/* Writes the default of attribute a into field (field holds nothing owned on entry). */
static int default_field(const struct ps_attr_table *table, const struct ps_attr *a, void *field)
{
    void *tmp = malloc(table->size);
    if (!tmp)
        return PS_ENOMEM;
    int rc = table->init(tmp);
    if (rc != 0) {
        free(tmp);
        return rc;
    }
    rc = copy_field(a, field, CFIELD(tmp, a));
    ps_attr_release(table, tmp);
    free(tmp);
    return rc;
}

static int set_group_map(const struct ps_attr *a, void *field, const char *key,
                         const struct ps_value *v, struct ps_error *err);

/* Parses v for attribute a into a fresh field image `out` (kind_size bytes, owning whatever
 * it points to); the caller commits it. */
static int parse_field(const struct ps_attr_table *table, const struct ps_attr *a, const char *key,
                       const struct ps_value *v, void *out, struct ps_error *err)
{
    if (v == NULL || v->type == PS_VALUE_NULL)
        return default_field(table, a, out);
    int rc;
    switch (a->kind) {
    case PS_ATTR_BOOL:
    case PS_ATTR_OPT_BOOL:
        if (v->type != PS_VALUE_BOOL)
            return bad_value(err, key, v, "must be a boolean");
        if (a->kind == PS_ATTR_BOOL)
            *(bool *)out = v->boolean;
        else
            *(struct ps_opt_bool *)out = (struct ps_opt_bool){true, v->boolean};
        return 0;
    case PS_ATTR_INT:
    case PS_ATTR_OPT_INT:
        rc = check_number(a, key, v, true, err);
        if (rc != 0)
            return rc;
        if (a->kind == PS_ATTR_INT)
            *(int64_t *)out = (int64_t)v->number;
        else
            *(struct ps_opt_int *)out = (struct ps_opt_int){true, (int64_t)v->number};
        return 0;
    case PS_ATTR_INT32:
        rc = check_number(a, key, v, true, err);
        if (rc == 0 && (v->number < INT_MIN || v->number > INT_MAX))
            rc = bad_value(err, key, v, "is too large");
        if (rc != 0)
            return rc;
        *(int *)out = (int)v->number;
        return 0;
    case PS_ATTR_DOUBLE:
    case PS_ATTR_OPT_DOUBLE:
        rc = check_number(a, key, v, false, err);
        if (rc != 0)
            return rc;
        if (a->kind == PS_ATTR_DOUBLE)
            *(double *)out = v->number;
        else
            *(struct ps_opt_double *)out = (struct ps_opt_double){true, v->number};
        return 0;
    case PS_ATTR_STRING:
    case PS_ATTR_OPT_STRING:
        rc = check_string(a, key, v, err);
        if (rc != 0)
            return rc;
        *(char **)out = strdup(v->string);
        return *(char **)out ? 0 : PS_ENOMEM;
    case PS_ATTR_ENUM:
    case PS_ATTR_OPT_ENUM: {
        int index = 0;
        rc = parse_enum(a, key, v, &index, err);
        if (rc != 0)
            return rc;
        if (a->kind == PS_ATTR_ENUM)
            *(int *)out = index;
        else
            *(struct ps_opt_int *)out = (struct ps_opt_int){true, index};
        return 0;
    }
    case PS_ATTR_RESOURCES:
        return parse_resources(key, v, out, err);
    case PS_ATTR_FIFO_LIST:
        return parse_fifo(key, v, out, err);
    case PS_ATTR_STRING_LIST:
        return parse_string_list(a, key, v, out, err);
    case PS_ATTR_DOUBLE_LIST:
        return parse_double_list(a, key, v, out, err);
    case PS_ATTR_GROUP:
        return set_group_map(a, out, key, v, err);
    case PS_ATTR_MAP:
        if (v->type != PS_VALUE_MAP)
            return bad_value(err, key, v, "must be a map");
        return ps_value_copy(out, v);
    case PS_ATTR_ACL:
        return ps_acl_parse(v, key, out, err);
    }
    return PS_EINVAL;
}

/* A map for a group replaces the whole group: defaults, then each entry. */
static int set_group_map(const struct ps_attr *a, void *field, const char *key,
                         const struct ps_value *v, struct ps_error *err)
{
    if (v->type != PS_VALUE_MAP)
        return bad_value(err, key, v, "must be a map");
    int init_rc = check_aliases(a->group, v, key, err);
    if (init_rc != 0)
        return init_rc;
    init_rc = a->group->init(field);
    if (init_rc != 0)
        return init_rc;
    for (int i = 0; i < v->count; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", key, v->keys[i]);
        const struct ps_attr *sub = ps_attr_find(a->group, v->keys[i]);
        if (!sub && (a->flags & PS_ATTR_SKIP_UNKNOWN))
            continue;
        if (!sub) {
            ps_attr_release(a->group, field);
            return unknown_key(err, path, v->keys[i], a->group);
        }
        size_t size = kind_size(sub);
        void *tmp = malloc(size);
        if (!tmp) {
            ps_attr_release(a->group, field);
            return PS_ENOMEM;
        }
        int rc = parse_field(a->group, sub, path, &v->items[i], tmp, err);
        if (rc != 0) {
            free(tmp);
            ps_attr_release(a->group, field);
            return rc;
        }
        release_field(sub, FIELD(field, sub));
        memcpy(FIELD(field, sub), tmp, size);
        free(tmp);
        if (sub->kind == PS_ATTR_GROUP && sub->presence_offset >= 0)
            *(bool *)((char *)field + sub->presence_offset) = v->items[i].type != PS_VALUE_NULL;
    }
    return 0;
}

/* ---- set / apply ------------------------------------------------------------------------- */

/* `<map key>/<entry>`: sets one entry of a MAP field (null removes it). Deeper paths are
 * refused: an entry is replaced as a whole. */
static int set_map_entry(struct ps_value *map, const char *entry, const char *full,
                         const struct ps_value *value, struct ps_error *err)
{
    if (strchr(entry, '/'))
        return ps_error_set(err, PS_EINVAL, "%s: set the whole entry \"%.*s\" instead", full,
                            (int)strcspn(entry, "/"), entry);
    struct ps_value next = ps_value_map();
    for (int i = 0; i < map->count; i++) {
        if (strcmp(map->keys[i], entry) == 0)
            continue;
        struct ps_value item;
        if (ps_value_copy(&item, &map->items[i]) != 0 || ps_value_put(&next, map->keys[i], &item) != 0) {
            ps_value_release(&next);
            return PS_ENOMEM;
        }
    }
    if (value && value->type != PS_VALUE_NULL) {
        struct ps_value item;
        if (ps_value_copy(&item, value) != 0 || ps_value_put(&next, entry, &item) != 0) {
            ps_value_release(&next);
            return PS_ENOMEM;
        }
    }
    ps_value_release(map);
    *map = next;
    return 0;
}

static int set_in(const struct ps_attr_table *table, void *obj, const char *path, const char *full,
                  const struct ps_value *value, struct ps_error *err)
{
    char head[128];
    const char *rest = split_path(path, head, sizeof head);
    const struct ps_attr *a = ps_attr_find(table, head);
    if (!a && CUSTOM(table, obj))   /* a custom attribute, kept as given */
        return set_map_entry(CUSTOM(table, obj), path, full, value, err);
    if (!a)
        return unknown_key(err, full, head, table);
    void *field = FIELD(obj, a);
    if (rest) {
        if (a->kind == PS_ATTR_RESOURCES) {
            if (strchr(rest, '/'))
                return ps_error_set(err, PS_EINVAL, "%s: unknown key", full);
            struct ps_resources_opt res = *(struct ps_resources_opt *)field;
            const struct ps_value null = ps_value_null();
            int rc = parse_resource(head, rest, value ? value : &null, &res, err);
            if (rc == 0)
                *(struct ps_resources_opt *)field = res;
            return rc;
        }
        if (a->kind == PS_ATTR_MAP)
            return set_map_entry(field, rest, full, value, err);
        if (a->kind == PS_ATTR_ACL)
            return ps_acl_set_path(field, rest, value, full, err);
        if (a->kind != PS_ATTR_GROUP)
            return ps_error_set(err, PS_EINVAL, "%s: \"%s\" has no sub-keys", full, head);
        int rc = set_in(a->group, field, rest, full, value, err);
        if (rc == 0 && a->presence_offset >= 0)
            *(bool *)((char *)obj + a->presence_offset) = true;
        return rc;
    }
    size_t size = kind_size(a);
    void *img = malloc(size);
    if (!img)
        return PS_ENOMEM;
    int rc = parse_field(table, a, full, value, img, err);
    if (rc == 0) {
        release_field(a, field);
        memcpy(field, img, size);
        if (a->kind == PS_ATTR_GROUP && a->presence_offset >= 0)
            *(bool *)((char *)obj + a->presence_offset) = value && value->type != PS_VALUE_NULL;
    }
    free(img);
    return rc;
}

int ps_attr_set(const struct ps_attr_table *table, void *obj, const char *path,
                const struct ps_value *value, struct ps_error *err)
{
    /* Sub-key sets may touch several fields (presence flag and value): work on a copy. */
    void *copy = malloc(table->size);
    if (!copy)
        return PS_ENOMEM;
    int rc = ps_attr_copy(table, copy, obj);
    if (rc == 0) {
        rc = respell(table, copy, path, value, err);
        if (rc == 0)
            rc = set_in(table, copy, path, path, value, err);
        if (rc == 0) {
            ps_attr_release(table, obj);
            memcpy(obj, copy, table->size);
        } else {
            ps_attr_release(table, copy);
        }
    }
    free(copy);
    return rc;
}

int ps_attr_apply(const struct ps_attr_table *table, void *obj, const struct ps_value *map,
                  bool skip_unknown, struct ps_error *err)
{
    if (!map)
        return 0;
    if (map->type != PS_VALUE_MAP)
        return bad_value(err, table->what, map, "must be a map");
    int rc = check_aliases(table, map, "", err);
    if (rc != 0)
        return rc;
    void *copy = malloc(table->size);
    if (!copy)
        return PS_ENOMEM;
    rc = ps_attr_copy(table, copy, obj);
    for (int i = 0; rc == 0 && i < map->count; i++) {
        char head[128];
        split_path(map->keys[i], head, sizeof head);
        if (skip_unknown && !ps_attr_find(table, head))
            continue;
        rc = respell(table, copy, map->keys[i], &map->items[i], err);
        if (rc == 0)
            rc = set_in(table, copy, map->keys[i], map->keys[i], &map->items[i], err);
    }
    if (rc == 0) {
        ps_attr_release(table, obj);
        memcpy(obj, copy, table->size);
    } else {
        ps_attr_release(table, copy);
    }
    free(copy);
    return rc;
}

static int field_to_value(const struct ps_attr *a, const void *obj, struct ps_value *out);

int ps_attr_refuse_custom(const struct ps_attr_table *table, const void *obj,
                          struct ps_error *err)
{
    const struct ps_value *custom = CUSTOM(table, obj);
    if (!custom || custom->type != PS_VALUE_MAP || custom->count == 0)
        return 0;
    return unknown_key(err, custom->keys[0], custom->keys[0], table);
}

/* ---- unrecognized keys, run-time keys ---------------------------------------------------- */

static bool listed(const char *const *names, const char *name)
{
    for (int i = 0; names && names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

int ps_attr_unrecognized(const struct ps_attr_table *table, const struct ps_value *map,
                         const char *const *extra, struct ps_value *out)
{
    *out = ps_value_map();
    if (!map || map->type != PS_VALUE_MAP)
        return 0;
    for (int i = 0; i < map->count; i++) {
        const struct ps_value *v = &map->items[i];
        const struct ps_attr *a = ps_attr_find(table, map->keys[i]);
        struct ps_value sub = ps_value_null();
        int rc = 0;
        if (!a && !listed(extra, map->keys[i])) {
            rc = ps_value_copy(&sub, v);
        } else if (a && a->kind == PS_ATTR_GROUP && v->type == PS_VALUE_MAP) {
            rc = ps_attr_unrecognized(a->group, v, NULL, &sub);
            if (rc == 0 && sub.count == 0)
                continue;
        } else {
            continue;
        }
        if (rc == 0)
            rc = ps_value_put(out, map->keys[i], &sub);
        if (rc != 0) {
            ps_value_release(out);
            return PS_ENOMEM;
        }
    }
    return 0;
}

int ps_attr_check_ranges(const struct ps_attr_table *table, const void *obj, const char *prefix,
                         struct ps_error *err)
{
    for (int i = 0; i < table->count; i++) {
        const struct ps_attr *a = &table->attrs[i];
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix ? prefix : "", prefix && prefix[0] ? "/" : "",
                 a->name);
        int rc = 0;
        if (a->kind == PS_ATTR_GROUP) {
            rc = ps_attr_check_ranges(a->group, CFIELD(obj, a), key, err);
        } else if (a->kind == PS_ATTR_INT || a->kind == PS_ATTR_INT32 ||
                   a->kind == PS_ATTR_DOUBLE || a->kind == PS_ATTR_OPT_INT ||
                   a->kind == PS_ATTR_OPT_DOUBLE) {
            struct ps_value v;
            if (field_to_value(a, obj, &v) != 0)
                return PS_ENOMEM;
            if (v.type == PS_VALUE_NUMBER)
                rc = check_number(a, key, &v, a->kind != PS_ATTR_DOUBLE &&
                                  a->kind != PS_ATTR_OPT_DOUBLE, err);
            ps_value_release(&v);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- get --------------------------------------------------------------------------------- */

static int resources_to_value(const struct ps_resources_opt *res, struct ps_value *out)
{
    *out = ps_value_map();
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (!(res->set & (1u << r)))
            continue;
        int rc = ps_value_put_number(out, ps_resource_name(r), ps_res_get(&res->r, r));
        if (rc != 0) {
            ps_value_release(out);
            return rc;
        }
    }
    return 0;
}

static int field_to_value(const struct ps_attr *a, const void *obj, struct ps_value *out)
{
    const void *f = CFIELD(obj, a);
    *out = ps_value_null();
    switch (a->kind) {
    case PS_ATTR_BOOL:
        *out = ps_value_bool(*(const bool *)f);
        return 0;
    case PS_ATTR_OPT_BOOL: {
        const struct ps_opt_bool *o = f;
        if (o->set)
            *out = ps_value_bool(o->value);
        return 0;
    }
    case PS_ATTR_INT:
        *out = ps_value_number((double)*(const int64_t *)f);
        return 0;
    case PS_ATTR_OPT_INT: {
        const struct ps_opt_int *o = f;
        if (o->set)
            *out = ps_value_number((double)o->value);
        return 0;
    }
    case PS_ATTR_INT32:
        *out = ps_value_number((double)*(const int *)f);
        return 0;
    case PS_ATTR_DOUBLE:
        *out = ps_value_number(*(const double *)f);
        return 0;
    case PS_ATTR_OPT_DOUBLE: {
        const struct ps_opt_double *o = f;
        if (o->set)
            *out = ps_value_number(o->value);
        return 0;
    }
    case PS_ATTR_STRING:
    case PS_ATTR_OPT_STRING: {
        const char *s = *(char *const *)f;
        if (!s)
            return 0;
        *out = ps_value_string(s);
        return out->type == PS_VALUE_STRING ? 0 : PS_ENOMEM;
    }
    case PS_ATTR_ENUM:
        *out = ps_value_string(a->enum_names[*(const int *)f]);
        return out->type == PS_VALUE_STRING ? 0 : PS_ENOMEM;
    case PS_ATTR_OPT_ENUM: {
        const struct ps_opt_int *o = f;
        if (!o->set)
            return 0;
        *out = ps_value_string(a->enum_names[o->value]);
        return out->type == PS_VALUE_STRING ? 0 : PS_ENOMEM;
    }
    case PS_ATTR_RESOURCES:
        return resources_to_value(f, out);
    case PS_ATTR_DOUBLE_LIST: {
        const struct ps_double_list *list = f;
        *out = ps_value_list();
        for (int i = 0; i < list->count; i++) {
            struct ps_value item = ps_value_number(list->items[i]);
            if (ps_value_append(out, &item) != 0) {
                ps_value_release(out);
                return PS_ENOMEM;
            }
        }
        return 0;
    }
    case PS_ATTR_FIFO_LIST:
    case PS_ATTR_STRING_LIST: {
        *out = ps_value_list();
        int n = a->kind == PS_ATTR_FIFO_LIST ? ((const struct ps_fifo_list *)f)->count
                                             : ((const struct ps_string_list *)f)->count;
        for (int i = 0; i < n; i++) {
            const char *s = a->kind == PS_ATTR_FIFO_LIST
                                ? fifo_names[((const struct ps_fifo_list *)f)->items[i]]
                                : ((const struct ps_string_list *)f)->items[i];
            struct ps_value item = ps_value_string(s);
            int rc = item.type == PS_VALUE_STRING ? ps_value_append(out, &item) : PS_ENOMEM;
            if (rc != 0) {
                ps_value_release(out);
                return rc;
            }
        }
        return 0;
    }
    case PS_ATTR_GROUP:
        if (a->presence_offset >= 0 && !*(const bool *)((const char *)obj + a->presence_offset))
            return 0;
        return ps_attr_to_value(a->group, f, out);
    case PS_ATTR_MAP: {
        const struct ps_value *m = f;
        if (m->type != PS_VALUE_MAP) {
            *out = ps_value_map();
            return 0;
        }
        return ps_value_copy(out, m);
    }
    case PS_ATTR_ACL:
        return ps_acl_to_value(f, out);
    }
    return PS_EINVAL;
}

static int get_in(const struct ps_attr_table *table, const void *obj, const char *path,
                  const char *full, struct ps_value *out, struct ps_error *err)
{
    char head[128];
    const char *rest = split_path(path, head, sizeof head);
    const struct ps_attr *a = ps_attr_find(table, head);
    *out = ps_value_null();
    const struct ps_value *custom = CUSTOM(table, obj);
    const struct ps_value *given = !a && custom ? ps_value_find(custom, rest ? head : path) : NULL;
    if (given && !rest)
        return ps_value_copy(out, given);
    if (!a)
        return ps_error_set(err, PS_EINVAL, "%s: unknown key of the %s", full, table->what);
    if (!rest)
        return field_to_value(a, obj, out);
    if (a->kind == PS_ATTR_RESOURCES) {
        int r = ps_resource_from_name(rest);
        if (r < 0)
            return ps_error_set(err, PS_EINVAL, "%s: unknown resource \"%s\"", full, rest);
        const struct ps_resources_opt *res = (const void *)CFIELD(obj, a);
        if (res->set & (1u << r))
            *out = ps_value_number(ps_res_get(&res->r, r));
        return 0;
    }
    if (a->kind == PS_ATTR_ACL)
        return ps_acl_get_path((const struct ps_acl *)CFIELD(obj, a), rest, out, full, err);
    if (a->kind == PS_ATTR_MAP) {
        const struct ps_value *entry = ps_value_find((const struct ps_value *)CFIELD(obj, a), rest);
        if (!entry || strchr(rest, '/'))
            return ps_error_set(err, PS_EINVAL, "%s: no such entry", full);
        return ps_value_copy(out, entry);
    }
    if (a->kind != PS_ATTR_GROUP)
        return ps_error_set(err, PS_EINVAL, "%s: \"%s\" has no sub-keys", full, head);
    return get_in(a->group, CFIELD(obj, a), rest, full, out, err);
}

int ps_attr_get(const struct ps_attr_table *table, const void *obj, const char *path,
                struct ps_value *out, struct ps_error *err)
{
    return get_in(table, obj, path, path, out, err);
}

int ps_attr_to_value(const struct ps_attr_table *table, const void *obj, struct ps_value *out)
{
    *out = ps_value_map();
    for (int i = 0; i < table->count; i++) {
        struct ps_value item;
        const struct ps_attr *a = &table->attrs[i];
        const unsigned char *s = spelling_of(table, (void *)obj, a);
        int rc = field_to_value(a, obj, &item);
        if (rc == 0)
            rc = ps_value_put(out, s ? spelled_name(a, *s) : a->name, &item);
        if (rc != 0) {
            ps_value_release(out);
            return rc;
        }
    }
    const struct ps_value *custom = CUSTOM(table, obj);
    for (int i = 0; custom && i < custom->count; i++) {
        struct ps_value item;
        if (ps_value_copy(&item, &custom->items[i]) != 0 ||
            ps_value_put(out, custom->keys[i], &item) != 0) {
            ps_value_release(out);
            return PS_ENOMEM;
        }
    }
    return 0;
}

int ps_attr_check_filter(const char *key, const char *value, struct ps_error *err)
{
    return ps_formula_parse_filter(key, value, NULL, err);
}

/* Whether an optional field holds a value (resources: per resource, see overlay). */
static bool field_is_set(const struct ps_attr *a, const void *f)
{
    switch (a->kind) {
    case PS_ATTR_OPT_BOOL: return ((const struct ps_opt_bool *)f)->set;
    case PS_ATTR_OPT_INT:
    case PS_ATTR_OPT_ENUM: return ((const struct ps_opt_int *)f)->set;
    case PS_ATTR_OPT_DOUBLE: return ((const struct ps_opt_double *)f)->set;
    case PS_ATTR_OPT_STRING: return *(char *const *)f != NULL;
    default: return true;
    }
}

int ps_attr_overlay(const struct ps_attr_table *table, void *dst, const void *src)
{
    for (int i = 0; i < table->count; i++) {
        const struct ps_attr *a = &table->attrs[i];
        void *d = FIELD(dst, a);
        const void *s = CFIELD(src, a);
        if (a->kind == PS_ATTR_RESOURCES) {
            struct ps_resources_opt *dr = d;
            const struct ps_resources_opt *sr = s;
            for (int r = 0; r < PS_RES_COUNT; r++) {
                unsigned bit = 1u << r;
                if ((sr->set & bit) && !(dr->set & bit)) {
                    dr->r.v[r] = sr->r.v[r];
                    dr->set |= bit;
                }
            }
            continue;
        }
        bool optional = a->kind == PS_ATTR_OPT_BOOL || a->kind == PS_ATTR_OPT_INT ||
                        a->kind == PS_ATTR_OPT_ENUM || a->kind == PS_ATTR_OPT_DOUBLE ||
                        a->kind == PS_ATTR_OPT_STRING;
        if (!optional || field_is_set(a, d) || !field_is_set(a, s))
            continue;
        void *img = malloc(kind_size(a));
        if (!img)
            return PS_ENOMEM;
        int rc = copy_field(a, img, s);
        if (rc == 0) {
            release_field(a, d);
            memcpy(d, img, kind_size(a));
        }
        free(img);
        if (rc != 0)
            return rc;
    }
    return 0;
}
