/* json_value.h — converting between jansson values (the service's wire model) and struct
 * ps_value (the engine's configuration currency, core/value.h).
 *
 * JSON -> ps_value: object -> map (key order kept), array -> list, string -> string, integer and
 * real -> number (a double; integers beyond 2^53 lose precision, as in any JSON reader that uses
 * doubles), true/false -> bool, null -> null.
 * ps_value -> JSON: the reverse; a number with an integral value in the int64 range whose
 * magnitude is below 2^53 becomes a JSON integer (so `"weight": 2` stays `2`, not `2.0`),
 * others a real. Non-finite numbers become null (JSON cannot hold them).
 */
#ifndef PS_IO_JSON_VALUE_H
#define PS_IO_JSON_VALUE_H

#include <jansson.h>

#include "core/error.h"
#include "core/op_spec.h"
#include "core/value.h"

/* Converts json into *out (a new owned value; the caller releases it). NULL json gives a null
 * value. Errors: PS_ENOMEM (then *out is null), PS_EINVAL for nesting deeper than 64. */
int ps_json_to_value(const json_t *json, struct ps_value *out, struct ps_error *err);

/* Converts v into a new json_t reference (NULL when out of memory). */
json_t *ps_value_to_json(const struct ps_value *v);

struct ps_attr_table;

/* A JSON map read into obj through table (ps_attr_apply without creating: every key must be
 * known), as the service reads its JSON documents (request parameters, the config file, the
 * node protocol). Errors: those of ps_json_to_value and ps_attr_apply (naming the key). */
int ps_attr_apply_json(const struct ps_attr_table *table, void *obj, const json_t *json,
                       struct ps_error *err);

/* An operation spec document (JSON) read through the spec's table (op_spec.h), as the service
 * and the simulator read it: *out gets the parsed spec (release with
 * ps_operation_spec_release), and *unrecognized (when not NULL) the keys no reader knows as a
 * JSON map, or NULL when there are none (upstream's unrecognized_spec). Errors: those of
 * ps_operation_spec_apply (PS_EINVAL naming the key), PS_ENOMEM; on error nothing is owned. */
int ps_operation_spec_from_json(const json_t *spec, struct ps_operation_spec *out,
                                json_t **unrecognized, struct ps_error *err);

#endif
