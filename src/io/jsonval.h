/* jsonval.h — reading JSON input values with checks and messages that name the path.
 *
 * The parsers of user files (snapshot, scenarios) read jansson values through these helpers, so
 * every bad value gets the same kind of message, one line:
 *   `<path>: must be <what>, got <value>`       pools[1].weight: must be ..., got "heavy"
 *   `<path>: unknown key "wieght" (did you mean "weight"?)`
 * A path is built by the caller ("pools[1]", "tree.integral_guarantees"); the empty path is the
 * top level of the document. Values and keys are shown escaped and cut short, so a message never
 * spans lines whatever the input holds.
 *
 * Every function returns 0 or a negative PS_E* code (PS_EINVAL for bad input) and fills err.
 */
#ifndef PS_IO_JSONVAL_H
#define PS_IO_JSONVAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/resources.h"

/* The largest stored value of a resource (bytes, slots, hundredths of a core) accepted in input,
 * well below PS_RES_INFINITE so that sums over many nodes cannot reach "unlimited". */
#define PS_JV_RESOURCE_MAX INT64_C(1000000000000000000)

/* Writes "<path>.<key>" (or "<key>" at the top level) into buf. */
void ps_jv_join(char *buf, size_t size, const char *path, const char *key);
/* Writes "<path>[<index>]" into buf. */
void ps_jv_index(char *buf, size_t size, const char *path, size_t index);

/* s quoted and escaped for a message ("a\nb" becomes "\"a\\nb\""), cut to about 60 bytes. */
void ps_jv_quote(char *buf, size_t size, const char *s);
/* A compact rendering of a JSON value for a message ("heavy" quoted, -1, {"cpu":1}, ...). */
void ps_jv_describe(const json_t *value, char *buf, size_t size);
/* "an object", "an array", "a string", "a number", "true", "false", "null". */
const char *ps_jv_type_name(const json_t *value);

/* Fails unless value is an object (what the message calls it: path). */
int ps_jv_expect_object(const json_t *value, const char *path, struct ps_error *err);
int ps_jv_expect_array(const json_t *value, const char *path, struct ps_error *err);

/* Fails on the first key of obj (in the document's order) that is not in allowed[] (NULL
 * terminated), suggesting the nearest allowed key when it looks like a typo. */
int ps_jv_check_keys(const json_t *obj, const char *path, const char *const *allowed,
                     struct ps_error *err);

/* Typed members of an object. When obj has no such key, *present (if not NULL) becomes false
 * and *out is left alone, so the caller's default stays. `what` completes "must be ..." and
 * describes the accepted range, e.g. "a number from 0 to 1". */
int ps_jv_double(const json_t *obj, const char *path, const char *key, double min, double max,
                 const char *what, double *out, bool *present, struct ps_error *err);
/* Integers; a JSON real with an integral value (3600000.0) is accepted too. */
int ps_jv_int(const json_t *obj, const char *path, const char *key, int64_t min, int64_t max,
              const char *what, int64_t *out, bool *present, struct ps_error *err);
/* The same check of a value itself (an array element): where names it in the message. */
int ps_jv_int_value(const json_t *v, const char *where, int64_t min, int64_t max,
                    const char *what, int64_t *out, struct ps_error *err);
int ps_jv_bool(const json_t *obj, const char *path, const char *key, bool *out, bool *present,
               struct ps_error *err);
/* *out borrows the string from obj (valid while obj lives). */
int ps_jv_string(const json_t *obj, const char *path, const char *key, const char **out,
                 bool *present, struct ps_error *err);

/* Resource maps (shared/spec/formats.md section 1): keys user_slots, cpu, gpu, memory, network;
 * cpu in cores, rounded to hundredths; the others whole numbers (an integral real such as
 * 314572800.0 is accepted); values >= 0 and at most PS_JV_RESOURCE_MAX stored units.
 * An omitted key is `missing` (0 in amounts, PS_RES_INFINITE in limits); *set (if not NULL)
 * receives bit i for each key given. */
int ps_jv_resources(const json_t *value, const char *path, int64_t missing,
                    struct ps_resources *out, unsigned *set, struct ps_error *err);

/* A volume map: the same keys, non-negative finite numbers (resource x seconds, cpu in
 * core-seconds, not rounded); omitted keys are 0. */
int ps_jv_volume(const json_t *value, const char *path, struct ps_volume *out,
                 struct ps_error *err);

/* The keys of objects a and b (either may be NULL), as a new object {key: true}; NULL when
 * out of memory. */
json_t *ps_jv_key_union(const json_t *a, const json_t *b);

#endif
