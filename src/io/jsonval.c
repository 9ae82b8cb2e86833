#include "io/jsonval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"

#define SHOWN_MAX 60   /* bytes of a key or value shown in a message */

void ps_jv_join(char *buf, size_t size, const char *path, const char *key)
{
    if (path[0])
        snprintf(buf, size, "%s.%s", path, key);
    else
        snprintf(buf, size, "%s", key);
}

void ps_jv_index(char *buf, size_t size, const char *path, size_t index)
{
    snprintf(buf, size, "%s[%zu]", path, index);
}

/* Cuts s at about max bytes, at a UTF-8 character boundary; returns the kept length. */
static size_t cut_utf8(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return n;
}

void ps_jv_quote(char *buf, size_t size, const char *s)
{
    size_t len = strlen(s), keep = cut_utf8(s, len, SHOWN_MAX), used = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
#define PUT(str)                                                                               \
    do {                                                                                       \
        size_t n_ = strlen(str);                                                               \
        if (used + n_ >= size)                                                                 \
            return;                                                                            \
        memcpy(buf + used, str, n_ + 1);                                                       \
        used += n_;                                                                            \
    } while (0)
    PUT("\"");
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        switch (c) {
        case '"': PUT("\\\""); break;
        case '\\': PUT("\\\\"); break;
        case '\n': PUT("\\n"); break;
        case '\t': PUT("\\t"); break;
        case '\r': PUT("\\r"); break;
        default:
            if (c < 0x20 || c == 0x7f) {
                snprintf(tmp, sizeof tmp, "\\x%02x", c);
            } else {
                tmp[0] = (char)c;
                tmp[1] = '\0';
            }
            PUT(tmp);
        }
    }
    PUT("\"");
    if (keep < len)
        PUT("...");
#undef PUT
}

void ps_jv_describe(const json_t *value, char *buf, size_t size)
{
    if (size == 0)
        return;
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    if (!text) {
        snprintf(buf, size, "%s", ps_jv_type_name(value));
        return;
    }
    /* jansson escapes control characters below 0x20 but, as JSON allows, not DEL (0x7f):
     * escape it too so a message never holds a control character. */
    size_t len = strlen(text), keep = cut_utf8(text, len, SHOWN_MAX), used = 0;
    for (size_t i = 0; i < keep && used + 7 < size; i++) {
        if (text[i] == 0x7f) {
            memcpy(buf + used, "\\u007f", 6);
            used += 6;
        } else {
            buf[used++] = text[i];
        }
    }
    buf[used] = '\0';
    if (keep < len && used + 4 <= size)
        memcpy(buf + used, "...", 4);
    free(text);
}

const char *ps_jv_type_name(const json_t *value)
{
    switch (json_typeof(value)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    default: return "null";
    }
}

static int type_error(const json_t *value, const char *path, const char *what,
                      struct ps_error *err)
{
    char got[96];
    ps_jv_describe(value, got, sizeof got);
    return ps_error_set(err, PS_EINVAL, "%s: must be %s, got %s", path[0] ? path : "snapshot",
                        what, got);
}

int ps_jv_expect_object(const json_t *value, const char *path, struct ps_error *err)
{
    return json_is_object(value) ? 0 : type_error(value, path, "an object", err);
}

int ps_jv_expect_array(const json_t *value, const char *path, struct ps_error *err)
{
    return json_is_array(value) ? 0 : type_error(value, path, "an array", err);
}

/* The allowed key nearest to key when it is close enough to be a typo, else NULL. */
static const char *suggest(const char *key, const char *const *allowed)
{
    int cap = 2;
    const char *best = NULL;
    int best_d = cap + 1;
    for (const char *const *a = allowed; *a; a++) {
        int d = ps_edit_distance(key, *a, cap);
        if (d < best_d) {
            best_d = d;
            best = *a;
        }
    }
    /* Very short keys are within 2 edits of too many things to guess. */
    return best && best_d < (int)strlen(key) ? best : NULL;
}

int ps_jv_check_keys(const json_t *obj, const char *path, const char *const *allowed,
                     struct ps_error *err)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(key, *a) == 0;
        if (ok)
            continue;
        char quoted[96], hint[128] = "";
        ps_jv_quote(quoted, sizeof quoted, key);
        const char *near = suggest(key, allowed);
        if (near)
            snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
        if (path[0])
            return ps_error_set(err, PS_EINVAL, "%s: unknown key %s%s", path, quoted, hint);
        return ps_error_set(err, PS_EINVAL, "snapshot: unknown top-level key %s%s", quoted,
                            hint);
    }
    return 0;
}

/* The member key of obj, NULL when it is absent; *present (may be NULL) says which. For a present
 * member, where receives its path for messages. */
static json_t *member(const json_t *obj, const char *path, const char *key, bool *present,
                      char *where, size_t where_size)
{
    json_t *v = json_object_get(obj, key);
    if (present)
        *present = v != NULL;
    if (v)
        ps_jv_join(where, where_size, path, key);
    return v;
}

int ps_jv_double(const json_t *obj, const char *path, const char *key, double min, double max,
                 const char *what, double *out, bool *present, struct ps_error *err)
{
    char where[256];
    json_t *v = member(obj, path, key, present, where, sizeof where);
    if (!v)
        return 0;
    if (!json_is_number(v))
        return type_error(v, where, what, err);
    double x = json_number_value(v);
    if (!(x >= min && x <= max))
        return type_error(v, where, what, err);
    *out = x;
    return 0;
}

/* The integral value of a JSON number, false when it is not a whole number in int64 range. */
static bool whole_number(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    double x = json_real_value(v);
    /* 2^63 is exactly representable; anything at or beyond it does not fit. */
    if (!(x == floor(x)) || !(x > -9223372036854775808.0 && x < 9223372036854775808.0))
        return false;
    *out = (int64_t)x;
    return true;
}

int ps_jv_int(const json_t *obj, const char *path, const char *key, int64_t min, int64_t max,
              const char *what, int64_t *out, bool *present, struct ps_error *err)
{
    char where[256];
    json_t *v = member(obj, path, key, present, where, sizeof where);
    if (!v)
        return 0;
    return ps_jv_int_value(v, where, min, max, what, out, err);
}

int ps_jv_int_value(const json_t *v, const char *where, int64_t min, int64_t max,
                    const char *what, int64_t *out, struct ps_error *err)
{
    int64_t x;
    if (!json_is_number(v) || !whole_number(v, &x) || x < min || x > max)
        return type_error(v, where, what, err);
    *out = x;
    return 0;
}

int ps_jv_bool(const json_t *obj, const char *path, const char *key, bool *out, bool *present,
               struct ps_error *err)
{
    char where[256];
    json_t *v = member(obj, path, key, present, where, sizeof where);
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return type_error(v, where, "true or false", err);
    *out = json_is_true(v);
    return 0;
}

int ps_jv_string(const json_t *obj, const char *path, const char *key, const char **out,
                 bool *present, struct ps_error *err)
{
    char where[256];
    json_t *v = member(obj, path, key, present, where, sizeof where);
    if (!v)
        return 0;
    if (!json_is_string(v))
        return type_error(v, where, "a string", err);
    *out = json_string_value(v);
    return 0;
}

static const char *const resource_keys[] = {"user_slots", "cpu", "gpu", "memory", "network", NULL};

static int unknown_resource(const char *path, const char *key, struct ps_error *err)
{
    char quoted[96], hint[128] = "";
    ps_jv_quote(quoted, sizeof quoted, key);
    const char *near = suggest(key, resource_keys);
    if (near)
        snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
    return ps_error_set(err, PS_EINVAL,
                        "%s: unknown resource %s%s, expected user_slots, cpu, gpu, memory or "
                        "network", path, quoted, hint);
}

int ps_jv_resources(const json_t *value, const char *path, int64_t missing,
                    struct ps_resources *out, unsigned *set, struct ps_error *err)
{
    int rc = ps_jv_expect_object(value, path, err);
    if (rc)
        return rc;
    struct ps_resources r;
    unsigned given = 0;
    for (int i = 0; i < PS_RES_COUNT; i++)
        r.v[i] = missing;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)value, key, v) {
        int res = ps_resource_from_name(key);
        if (res < 0)
            return unknown_resource(path, key, err);
        char where[256];
        ps_jv_join(where, sizeof where, path, key);
        if (res == PS_RES_CPU) {
            /* Cores with 2 decimals, as YTsaurus's TCpuResource. */
            const double max = (double)PS_JV_RESOURCE_MAX / PS_CPU_SCALE;
            if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= max))
                return type_error(v, where, "a number of cores from 0 to 1e16", err);
            r.v[res] = ps_res_from_double(res, json_number_value(v));
        } else {
            int64_t x;
            if (!json_is_number(v) || !whole_number(v, &x) || x < 0 || x > PS_JV_RESOURCE_MAX)
                return type_error(v, where, "a whole number from 0 to 1e18", err);
            r.v[res] = x;
        }
        given |= 1u << res;
    }
    *out = r;
    if (set)
        *set = given;
    return 0;
}

int ps_jv_volume(const json_t *value, const char *path, struct ps_volume *out,
                 struct ps_error *err)
{
    int rc = ps_jv_expect_object(value, path, err);
    if (rc)
        return rc;
    struct ps_volume vol;
    memset(&vol, 0, sizeof vol);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)value, key, v) {
        int res = ps_resource_from_name(key);
        if (res < 0)
            return unknown_resource(path, key, err);
        char where[256];
        ps_jv_join(where, sizeof where, path, key);
        if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1e30))
            return type_error(v, where, "a number from 0 to 1e30 (resource x seconds)", err);
        vol.v[res] = json_number_value(v);
    }
    *out = vol;
    return 0;
}

json_t *ps_jv_key_union(const json_t *a, const json_t *b)
{
    json_t *set = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
        json_object_set(set, k, json_true());
    json_object_foreach((json_t *)b, k, v)
        json_object_set(set, k, json_true());
    return set;
}
