#include "io/json_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DESCRIBE_MAX 64
#define EDIT_MAX 64   /* keys longer than this get no "did you mean" */

void ps_json_path_key(char out[PS_JSON_PATH_MAX], const char *parent, const char *key)
{
    if (parent[0] == '\0')
        snprintf(out, PS_JSON_PATH_MAX, "%s", key);
    else
        snprintf(out, PS_JSON_PATH_MAX, "%s.%s", parent, key);
}

void ps_json_path_index(char out[PS_JSON_PATH_MAX], const char *parent, size_t index)
{
    snprintf(out, PS_JSON_PATH_MAX, "%s[%zu]", parent, index);
}

void ps_json_describe(const json_t *v, char *buf, size_t size)
{
    if (size == 0)
        return;
    if (!v) {
        snprintf(buf, size, "nothing");
        return;
    }
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!text) {
        snprintf(buf, size, "a %s", json_is_object(v) ? "object" : "value");
        return;
    }
    size_t cap = size < DESCRIBE_MAX ? size : DESCRIBE_MAX;
    if (strlen(text) < cap)
        snprintf(buf, size, "%s", text);
    else
        snprintf(buf, size, "%.*s...", (int)(cap - 4), text);
    free(text);
}

static const char *plural_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int ps_json_expect_object(const json_t *v, const char *path, struct ps_error *err)
{
    if (json_is_object(v))
        return 0;
    char got[DESCRIBE_MAX];
    ps_json_describe(v, got, sizeof got);
    return ps_error_set(err, PS_EINVAL, "%s: must be an object, got %s %s",
                        path[0] ? path : "scenario", plural_kind(v), got);
}

int ps_json_expect_array(const json_t *v, const char *path, struct ps_error *err)
{
    if (json_is_array(v))
        return 0;
    char got[DESCRIBE_MAX];
    ps_json_describe(v, got, sizeof got);
    return ps_error_set(err, PS_EINVAL, "%s: must be a list, got %s %s", path, plural_kind(v), got);
}

/* Levenshtein distance with adjacent transpositions (optimal string alignment). */
static int edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > EDIT_MAX || m > EDIT_MAX)
        return EDIT_MAX;
    int d[EDIT_MAX + 1][EDIT_MAX + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

int ps_json_check_keys(const json_t *obj, const char *path, const char *const *allowed,
                       struct ps_error *err)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        bool known = false;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(key, *a) == 0)
                known = true;
        if (known)
            continue;
        char where[PS_JSON_PATH_MAX];
        ps_json_path_key(where, path, key);
        const char *closest = NULL;
        int closest_distance = 3;   /* suggest only within distance 2 */
        for (const char *const *a = allowed; *a; a++) {
            int dist = edit_distance(key, *a);
            if (dist < closest_distance) {
                closest_distance = dist;
                closest = *a;
            }
        }
        if (closest)
            return ps_error_set(err, PS_EINVAL, "%s: unknown key; did you mean \"%s\"?", where,
                                closest);
        char list[PS_ERROR_MSG_MAX] = "";
        size_t used = 0;
        for (const char *const *a = allowed; *a && used < sizeof list; a++) {
            int n = snprintf(list + used, sizeof list - used, "%s%s", a == allowed ? "" : ", ", *a);
            if (n < 0)
                break;
            used += (size_t)n;
        }
        return ps_error_set(err, PS_EINVAL, "%s: unknown key (expected one of: %s)", where, list);
    }
    return 0;
}

/* The integer value of v when it is a JSON integer or an integral real within +-2^53. */
static bool integral_value(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (isfinite(x) && x == floor(x) && fabs(x) <= (double)PS_JSON_MAX_INT) {
            *out = (int64_t)x;
            return true;
        }
    }
    return false;
}

int ps_json_get_int(const json_t *v, const char *path, int64_t min, int64_t max, int64_t *out,
                    struct ps_error *err)
{
    const char *want = min == 1 ? "a positive integer"
                     : min == 0 ? "a non-negative integer"
                                : "an integer";
    char got[DESCRIBE_MAX];
    int64_t x;
    if (!integral_value(v, &x) || x < min) {
        ps_json_describe(v, got, sizeof got);
        if (min > 1 && integral_value(v, &x))
            return ps_error_set(err, PS_EINVAL, "%s: must be at least %lld, got %s", path,
                                (long long)min, got);
        return ps_error_set(err, PS_EINVAL, "%s: must be %s, got %s", path, want, got);
    }
    if (x > max) {
        ps_json_describe(v, got, sizeof got);
        return ps_error_set(err, PS_EINVAL, "%s: must be at most %lld, got %s", path,
                            (long long)max, got);
    }
    *out = x;
    return 0;
}

int ps_json_get_nonneg_number(const json_t *v, const char *path, double max, double *out,
                              struct ps_error *err)
{
    char got[DESCRIBE_MAX];
    if (!json_is_number(v) || !(json_number_value(v) >= 0.0)) {
        ps_json_describe(v, got, sizeof got);
        return ps_error_set(err, PS_EINVAL, "%s: must be a non-negative number, got %s", path, got);
    }
    double x = json_number_value(v);
    if (!(x <= max)) {
        ps_json_describe(v, got, sizeof got);
        return ps_error_set(err, PS_EINVAL, "%s: must be at most %g, got %s", path, max, got);
    }
    *out = x;
    return 0;
}

int ps_json_get_string(const json_t *v, const char *path, bool nonempty, const char **out,
                       struct ps_error *err)
{
    char got[DESCRIBE_MAX];
    if (!json_is_string(v)) {
        ps_json_describe(v, got, sizeof got);
        return ps_error_set(err, PS_EINVAL, "%s: must be a string, got %s", path, got);
    }
    if (nonempty && json_string_length(v) == 0)
        return ps_error_set(err, PS_EINVAL, "%s: must be a non-empty string", path);
    *out = json_string_value(v);
    return 0;
}

int ps_json_get_resources(const json_t *v, const char *path, bool is_limits,
                          struct ps_resources *out, struct ps_error *err)
{
    static const char *const names[] = {"user_slots", "cpu", "gpu", "memory", "network", NULL};
    int rc = ps_json_expect_object(v, path, err);
    if (rc == 0)
        rc = ps_json_check_keys(v, path, names, err);
    if (rc != 0)
        return rc;
    struct ps_resources r = is_limits ? ps_resources_infinite() : ps_resources_zero();
    for (int i = 0; i < PS_RES_COUNT; i++) {
        const char *name = ps_resource_name(i);
        const json_t *x = json_object_get(v, name);
        if (!x)
            continue;
        char where[PS_JSON_PATH_MAX];
        ps_json_path_key(where, path, name);
        if (i == PS_RES_CPU) {
            double cores;
            rc = ps_json_get_nonneg_number(x, where, PS_JSON_MAX_CPU_CORES, &cores, err);
            if (rc == 0)
                r.v[i] = ps_res_from_double(PS_RES_CPU, cores);
        } else {
            rc = ps_json_get_int(x, where, 0, PS_JSON_MAX_INT, &r.v[i], err);
        }
        if (rc != 0)
            return rc;
    }
    *out = r;
    return 0;
}
