/* value_helpers.h — building struct ps_value documents tersely in tests.
 *
 * json() parses a tiny JSON subset (objects, arrays, strings without escapes, numbers, true,
 * false, null) so that test inputs read like the documents users write. It aborts the test on
 * malformed input: test documents are constants.
 */
#ifndef PS_TEST_VALUE_HELPERS_H
#define PS_TEST_VALUE_HELPERS_H

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"

static struct ps_value json_parse_at(const char **p);

static void json_skip(const char **p)
{
    while (isspace((unsigned char)**p))
        (*p)++;
}

static char *json_string_at(const char **p)
{
    (*p)++;   /* opening quote */
    const char *start = *p;
    while (**p && **p != '"')
        (*p)++;
    size_t n = (size_t)(*p - start);
    char *s = malloc(n + 1);
    memcpy(s, start, n);
    s[n] = '\0';
    if (**p == '"')
        (*p)++;
    return s;
}

static struct ps_value json_parse_at(const char **p)
{
    json_skip(p);
    char c = **p;
    if (c == '{') {
        struct ps_value map = ps_value_map();
        (*p)++;
        json_skip(p);
        while (**p && **p != '}') {
            char *key = json_string_at(p);
            json_skip(p);
            if (**p == ':')
                (*p)++;
            struct ps_value item = json_parse_at(p);
            ps_value_put(&map, key, &item);
            free(key);
            json_skip(p);
            if (**p == ',')
                (*p)++;
            json_skip(p);
        }
        if (**p == '}')
            (*p)++;
        return map;
    }
    if (c == '[') {
        struct ps_value list = ps_value_list();
        (*p)++;
        json_skip(p);
        while (**p && **p != ']') {
            struct ps_value item = json_parse_at(p);
            ps_value_append(&list, &item);
            json_skip(p);
            if (**p == ',')
                (*p)++;
            json_skip(p);
        }
        if (**p == ']')
            (*p)++;
        return list;
    }
    if (c == '"') {
        char *s = json_string_at(p);
        struct ps_value v = ps_value_string(s);
        free(s);
        return v;
    }
    if (strncmp(*p, "true", 4) == 0) {
        *p += 4;
        return ps_value_bool(true);
    }
    if (strncmp(*p, "false", 5) == 0) {
        *p += 5;
        return ps_value_bool(false);
    }
    if (strncmp(*p, "null", 4) == 0) {
        *p += 4;
        return ps_value_null();
    }
    char *end;
    double x = strtod(*p, &end);
    if (end == *p)
        abort();
    *p = end;
    return ps_value_number(x);
}

/* Parses a constant JSON document into an owned value (release with ps_value_release). */
static inline struct ps_value json(const char *text)
{
    const char *p = text;
    return json_parse_at(&p);
}

#endif
