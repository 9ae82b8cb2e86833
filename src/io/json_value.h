/* json_value.h — a parsed JSON document (jansson) as the engine's tagged value (core/value.h).
 *
 * The scenario parser keeps tree attributes, pool attributes and operation specs as json_t on
 * purpose: their meaning belongs to the table-driven setters of the pool tree module, which
 * take a struct ps_value. This is the bridge: one function, used by the simulator to hand those
 * documents to ps_strategy_add_tree, ps_pool_tree_create_pools and ps_strategy_start_operation.
 *
 * Mapping: null -> null, true/false -> bool, integer and real -> number (a double: integers
 * beyond 2^53 lose precision, as everywhere a ps_value holds a number), string -> string,
 * array -> list, object -> map with the document's key order (jansson keeps insertion order).
 */
#ifndef PS_IO_JSON_VALUE_H
#define PS_IO_JSON_VALUE_H

#include <jansson.h>

#include "core/error.h"
#include "core/value.h"

/* Converts json into *out (owned by the caller, release with ps_value_release). NULL json gives
 * a null value. Returns 0 or PS_ENOMEM (then *out is null and nothing leaks). */
int ps_json_to_value(const json_t *json, struct ps_value *out, struct ps_error *err);

#endif
