/* json_value.c — jansson documents to struct ps_value. */
#include "io/json_value.h"

static int convert(const json_t *j, struct ps_value *out)
{
    *out = ps_value_null();
    if (!j)
        return 0;
    switch (json_typeof(j)) {
    case JSON_NULL:
        return 0;
    case JSON_TRUE:
        *out = ps_value_bool(true);
        return 0;
    case JSON_FALSE:
        *out = ps_value_bool(false);
        return 0;
    case JSON_INTEGER:
    case JSON_REAL:
        *out = ps_value_number(json_number_value(j));
        return 0;
    case JSON_STRING:
        *out = ps_value_string(json_string_value(j));
        return out->type == PS_VALUE_STRING ? 0 : PS_ENOMEM;
    case JSON_ARRAY: {
        *out = ps_value_list();
        size_t i;
        const json_t *item;
        json_array_foreach(j, i, item) {
            struct ps_value v;
            if (convert(item, &v) != 0 || ps_value_append(out, &v) != 0) {
                ps_value_release(out);
                return PS_ENOMEM;
            }
        }
        return 0;
    }
    case JSON_OBJECT: {
        *out = ps_value_map();
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)j, key, item) {
            struct ps_value v;
            if (convert(item, &v) != 0 || ps_value_put(out, key, &v) != 0) {
                ps_value_release(out);
                return PS_ENOMEM;
            }
        }
        return 0;
    }
    }
    return 0;
}

int ps_json_to_value(const json_t *json, struct ps_value *out, struct ps_error *err)
{
    int rc = convert(json, out);
    if (rc != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory converting a JSON document");
    return 0;
}
