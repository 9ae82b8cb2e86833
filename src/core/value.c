#include "core/value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

struct ps_value ps_value_null(void)
{
    struct ps_value v;
    memset(&v, 0, sizeof v);
    return v;
}

struct ps_value ps_value_bool(bool b)
{
    struct ps_value v = ps_value_null();
    v.type = PS_VALUE_BOOL;
    v.boolean = b;
    return v;
}

struct ps_value ps_value_number(double x)
{
    struct ps_value v = ps_value_null();
    v.type = PS_VALUE_NUMBER;
    v.number = x;
    return v;
}

struct ps_value ps_value_string(const char *s)
{
    struct ps_value v = ps_value_null();
    v.string = strdup(s);
    if (v.string)
        v.type = PS_VALUE_STRING;
    return v;
}

struct ps_value ps_value_list(void)
{
    struct ps_value v = ps_value_null();
    v.type = PS_VALUE_LIST;
    return v;
}

struct ps_value ps_value_map(void)
{
    struct ps_value v = ps_value_null();
    v.type = PS_VALUE_MAP;
    return v;
}

static int grow(struct ps_value *v)
{
    if (v->count < v->capacity)
        return 0;
    int cap = v->capacity ? 2 * v->capacity : 4;
    struct ps_value *items = realloc(v->items, (size_t)cap * sizeof *items);
    if (!items)
        return PS_ENOMEM;
    v->items = items;
    if (v->type == PS_VALUE_MAP) {
        char **keys = realloc(v->keys, (size_t)cap * sizeof *keys);
        if (!keys)
            return PS_ENOMEM;
        v->keys = keys;
    }
    v->capacity = cap;
    return 0;
}

int ps_value_append(struct ps_value *list, struct ps_value *item)
{
    if (list->type != PS_VALUE_LIST || grow(list) != 0) {
        ps_value_release(item);
        return list->type != PS_VALUE_LIST ? PS_EINVAL : PS_ENOMEM;
    }
    list->items[list->count++] = *item;
    *item = ps_value_null();
    return 0;
}

int ps_value_put(struct ps_value *map, const char *key, struct ps_value *item)
{
    if (map->type != PS_VALUE_MAP) {
        ps_value_release(item);
        return PS_EINVAL;
    }
    for (int i = 0; i < map->count; i++) {
        if (strcmp(map->keys[i], key) == 0) {
            ps_value_release(&map->items[i]);
            map->items[i] = *item;
            *item = ps_value_null();
            return 0;
        }
    }
    char *k = strdup(key);
    if (!k || grow(map) != 0) {
        free(k);
        ps_value_release(item);
        return PS_ENOMEM;
    }
    map->keys[map->count] = k;
    map->items[map->count++] = *item;
    *item = ps_value_null();
    return 0;
}

int ps_value_put_number(struct ps_value *map, const char *key, double x)
{
    struct ps_value v = ps_value_number(x);
    return ps_value_put(map, key, &v);
}

int ps_value_put_string(struct ps_value *map, const char *key, const char *s)
{
    struct ps_value v = ps_value_string(s);
    if (v.type != PS_VALUE_STRING)
        return PS_ENOMEM;
    return ps_value_put(map, key, &v);
}

int ps_value_put_bool(struct ps_value *map, const char *key, bool b)
{
    struct ps_value v = ps_value_bool(b);
    return ps_value_put(map, key, &v);
}

const struct ps_value *ps_value_find(const struct ps_value *map, const char *key)
{
    if (!map || map->type != PS_VALUE_MAP)
        return NULL;
    for (int i = 0; i < map->count; i++)
        if (strcmp(map->keys[i], key) == 0)
            return &map->items[i];
    return NULL;
}

int ps_value_copy(struct ps_value *dst, const struct ps_value *src)
{
    *dst = ps_value_null();
    switch (src->type) {
    case PS_VALUE_NULL:
        return 0;
    case PS_VALUE_BOOL:
    case PS_VALUE_NUMBER:
        *dst = *src;
        return 0;
    case PS_VALUE_STRING:
        *dst = ps_value_string(src->string);
        return dst->type == PS_VALUE_STRING ? 0 : PS_ENOMEM;
    case PS_VALUE_LIST:
    case PS_VALUE_MAP:
        *dst = src->type == PS_VALUE_LIST ? ps_value_list() : ps_value_map();
        for (int i = 0; i < src->count; i++) {
            struct ps_value item;
            int rc = ps_value_copy(&item, &src->items[i]);
            if (rc == 0)
                rc = src->type == PS_VALUE_LIST ? ps_value_append(dst, &item)
                                                : ps_value_put(dst, src->keys[i], &item);
            if (rc != 0) {
                ps_value_release(dst);
                return rc;
            }
        }
        return 0;
    }
    return PS_EINVAL;
}

bool ps_value_equal(const struct ps_value *a, const struct ps_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case PS_VALUE_NULL: return true;
    case PS_VALUE_BOOL: return a->boolean == b->boolean;
    case PS_VALUE_NUMBER: return a->number == b->number;
    case PS_VALUE_STRING: return strcmp(a->string, b->string) == 0;
    case PS_VALUE_LIST:
        if (a->count != b->count)
            return false;
        for (int i = 0; i < a->count; i++)
            if (!ps_value_equal(&a->items[i], &b->items[i]))
                return false;
        return true;
    case PS_VALUE_MAP:
        if (a->count != b->count)
            return false;
        for (int i = 0; i < a->count; i++) {
            const struct ps_value *other = ps_value_find(b, a->keys[i]);
            if (!other || !ps_value_equal(&a->items[i], other))
                return false;
        }
        return true;
    }
    return false;
}

void ps_value_release(struct ps_value *v)
{
    if (!v)
        return;
    free(v->string);
    for (int i = 0; i < v->count; i++) {
        ps_value_release(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    *v = ps_value_null();
}

const char *ps_value_type_name(enum ps_value_type type)
{
    switch (type) {
    case PS_VALUE_NULL: return "null";
    case PS_VALUE_BOOL: return "boolean";
    case PS_VALUE_NUMBER: return "number";
    case PS_VALUE_STRING: return "string";
    case PS_VALUE_LIST: return "list";
    case PS_VALUE_MAP: return "map";
    }
    return "unknown";
}

/* Appends text to buf at *len, keeping room for a trailing "..." marker. */
static void put(char *buf, int size, int *len, const char *text)
{
    int n = (int)strlen(text);
    if (*len + n >= size) {
        n = size - 1 - *len;
        if (n < 0)
            n = 0;
    }
    memcpy(buf + *len, text, (size_t)n);
    *len += n;
    buf[*len] = '\0';
}

/* text in double quotes, with quotes, backslashes and control characters escaped as JSON
 * does, so that a message quoting user input stays one line. */
static void put_quoted(char *buf, int size, int *len, const char *text)
{
    put(buf, size, len, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        char esc[8] = {(char)*p, 0};
        if (*p == '"' || *p == '\\')
            snprintf(esc, sizeof esc, "\\%c", *p);
        else if (*p == '\n')
            snprintf(esc, sizeof esc, "\\n");
        else if (*p == '\t')
            snprintf(esc, sizeof esc, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            snprintf(esc, sizeof esc, "\\u%04x", *p);
        put(buf, size, len, esc);
    }
    put(buf, size, len, "\"");
}

/* Integers in plain digits (10, not 1e+01); other numbers in the shortest form that
 * round-trips (0.1, not 0.10000000000000001). */
static void number_text(double x, char *out, size_t size)
{
    if (x > -1e15 && x < 1e15 && x == (double)(long long)x) {
        snprintf(out, size, "%lld", (long long)x);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

static void describe(const struct ps_value *v, char *buf, int size, int *len)
{
    char tmp[64];
    switch (v->type) {
    case PS_VALUE_NULL:
        put(buf, size, len, "null");
        break;
    case PS_VALUE_BOOL:
        put(buf, size, len, v->boolean ? "true" : "false");
        break;
    case PS_VALUE_NUMBER:
        number_text(v->number, tmp, sizeof tmp);
        put(buf, size, len, tmp);
        break;
    case PS_VALUE_STRING:
        put_quoted(buf, size, len, v->string);
        break;
    case PS_VALUE_LIST:
    case PS_VALUE_MAP:
        put(buf, size, len, v->type == PS_VALUE_LIST ? "[" : "{");
        for (int i = 0; i < v->count; i++) {
            if (i > 0)
                put(buf, size, len, ", ");
            if (v->type == PS_VALUE_MAP) {
                put_quoted(buf, size, len, v->keys[i]);
                put(buf, size, len, ": ");
            }
            describe(&v->items[i], buf, size, len);
        }
        put(buf, size, len, v->type == PS_VALUE_LIST ? "]" : "}");
        break;
    }
}

char *ps_value_describe(const struct ps_value *v, char *buf, int size)
{
    if (size <= 0)
        return buf;
    int len = 0;
    buf[0] = '\0';
    describe(v, buf, size, &len);
    if (len == size - 1 && size > 4)
        memcpy(buf + size - 4, "...", 4);
    return buf;
}

int ps_value_map_without(const struct ps_value *map, const char *const *skip,
                         struct ps_value *out)
{
    *out = ps_value_map();
    for (int i = 0; map && map->type == PS_VALUE_MAP && i < map->count; i++) {
        bool skipped = false;
        for (int k = 0; skip && skip[k]; k++)
            skipped |= strcmp(map->keys[i], skip[k]) == 0;
        if (skipped)
            continue;
        struct ps_value item;
        int rc = ps_value_copy(&item, &map->items[i]);
        if (rc == 0)
            rc = ps_value_put(out, map->keys[i], &item);
        if (rc != 0) {
            ps_value_release(out);
            return rc;
        }
    }
    return 0;
}
