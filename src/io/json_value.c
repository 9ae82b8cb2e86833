#include "io/json_value.h"

#include <math.h>

#include "core/attr.h"

#define MAX_DEPTH 64

static int convert(const json_t *j, struct ps_value *out, int depth, struct ps_error *err)
{
    *out = ps_value_null();
    if (!j)
        return 0;
    if (depth > MAX_DEPTH)
        return ps_error_set(err, PS_EINVAL, "value nested deeper than %d levels", MAX_DEPTH);
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        *out = ps_value_map();
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)j, key, item) {
            struct ps_value v;
            int rc = convert(item, &v, depth + 1, err);
            if (rc == 0)
                rc = ps_value_put(out, key, &v);
            if (rc != 0) {
                ps_value_release(out);
                return rc == PS_ENOMEM ? ps_error_set(err, PS_ENOMEM, "out of memory") : rc;
            }
        }
        return 0;
    }
    case JSON_ARRAY: {
        *out = ps_value_list();
        size_t i;
        json_t *item;
        json_array_foreach(j, i, item) {
            struct ps_value v;
            int rc = convert(item, &v, depth + 1, err);
            if (rc == 0)
                rc = ps_value_append(out, &v);
            if (rc != 0) {
                ps_value_release(out);
                return rc == PS_ENOMEM ? ps_error_set(err, PS_ENOMEM, "out of memory") : rc;
            }
        }
        return 0;
    }
    case JSON_STRING:
        *out = ps_value_string(json_string_value(j));
        if (out->type != PS_VALUE_STRING)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        return 0;
    case JSON_INTEGER:
        *out = ps_value_number((double)json_integer_value(j));
        return 0;
    case JSON_REAL:
        *out = ps_value_number(json_real_value(j));
        return 0;
    case JSON_TRUE:
        *out = ps_value_bool(true);
        return 0;
    case JSON_FALSE:
        *out = ps_value_bool(false);
        return 0;
    case JSON_NULL:
    default:
        return 0;
    }
}

int ps_json_to_value(const json_t *json, struct ps_value *out, struct ps_error *err)
{
    return convert(json, out, 0, err);
}

json_t *ps_value_to_json(const struct ps_value *v)
{
    switch (v->type) {
    case PS_VALUE_BOOL:
        return json_boolean(v->boolean);
    case PS_VALUE_NUMBER: {
        double x = v->number;
        if (!isfinite(x))
            return json_null();
        if (x == floor(x) && fabs(x) < 9007199254740992.0)
            return json_integer((json_int_t)x);
        return json_real(x);
    }
    case PS_VALUE_STRING:
        return json_string(v->string);
    case PS_VALUE_LIST: {
        json_t *a = json_array();
        for (int i = 0; a && i < v->count; i++) {
            json_t *item = ps_value_to_json(&v->items[i]);
            if (!item || json_array_append_new(a, item) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    case PS_VALUE_MAP: {
        json_t *o = json_object();
        for (int i = 0; o && i < v->count; i++) {
            json_t *item = ps_value_to_json(&v->items[i]);
            if (!item || json_object_set_new(o, v->keys[i], item) != 0) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    case PS_VALUE_NULL:
    default:
        return json_null();
    }
}

int ps_operation_spec_from_json(const json_t *spec, struct ps_operation_spec *out,
                                json_t **unrecognized, struct ps_error *err)
{
    if (unrecognized)
        *unrecognized = NULL;
    struct ps_value doc, unknown = ps_value_null();
    int rc = ps_json_to_value(spec, &doc, err);
    if (rc != 0)
        return rc;
    if (ps_operation_spec_init(out) != 0) {
        ps_value_release(&doc);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    rc = ps_operation_spec_apply(out, &doc, err);
    if (rc == 0 && unrecognized && ps_operation_spec_unrecognized(&doc, &unknown) != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0 && unknown.count > 0 && !(*unrecognized = ps_value_to_json(&unknown)))
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_value_release(&unknown);
    ps_value_release(&doc);
    if (rc != 0)
        ps_operation_spec_release(out);
    return rc;
}

int ps_attr_apply_json(const struct ps_attr_table *table, void *obj, const json_t *json,
                       struct ps_error *err)
{
    struct ps_value doc;
    int rc = ps_json_to_value(json, &doc, err);
    if (rc == 0)
        rc = ps_attr_apply(table, obj, &doc, false, err);
    ps_value_release(&doc);
    return rc;
}
