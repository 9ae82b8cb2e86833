/* json_check.h — reading JSON values with checks whose errors name the JSON path.
 *
 * Parsers of poolsched's JSON formats build a path as they descend (`operations[3].tasks[0]`)
 * and read leaves through these helpers, which set a ps_error such as
 * `operations[3].tasks[0].job_count: must be a positive integer, got -1` and return PS_EINVAL.
 * Paths are truncated at PS_JSON_PATH_MAX - 1 characters. Integers may be written as JSON
 * integers or as reals with an integral value (1e9); strings never count as numbers.
 */
#ifndef PS_IO_JSON_CHECK_H
#define PS_IO_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/resources.h"

#define PS_JSON_PATH_MAX 256
/* Bounds on values read through ps_json_get_resources; they keep later sums far from overflow. */
#define PS_JSON_MAX_INT ((int64_t)1 << 53)   /* 2^53: integers a double also represents */
#define PS_JSON_MAX_CPU_CORES 1e12

/* out = "parent.key", or "key" when parent is "" (the document root). */
void ps_json_path_key(char out[PS_JSON_PATH_MAX], const char *parent, const char *key);
/* out = "parent[index]". */
void ps_json_path_index(char out[PS_JSON_PATH_MAX], const char *parent, size_t index);

/* A short rendering of v for "got ..." in messages (compact JSON, cut with "..." after about
 * 60 characters; "nothing" for NULL). */
void ps_json_describe(const json_t *v, char *buf, size_t size);

/* The object at path (or the document root for ""): an error when v is not an object. */
int ps_json_expect_object(const json_t *v, const char *path, struct ps_error *err);
/* The same for an array. */
int ps_json_expect_array(const json_t *v, const char *path, struct ps_error *err);

/* Every key of obj must be in allowed (NULL-terminated). Otherwise: `<path>.<key>: unknown key`
 * plus `; did you mean "<close key>"?` when an allowed key is within edit distance 2, else the
 * list of allowed keys. Keys are checked in document order, so the first unknown one is named. */
int ps_json_check_keys(const json_t *obj, const char *path, const char *const *allowed,
                       struct ps_error *err);

/* An integer in [min, max] into *out. Messages: "must be a positive integer" (min 1), "must
 * be a non-negative integer" (min 0), "must be an integer" otherwise, and "must be at most
 * <max>" above max; each followed by ", got <value>". */
int ps_json_get_int(const json_t *v, const char *path, int64_t min, int64_t max, int64_t *out,
                    struct ps_error *err);

/* A finite number >= 0 and <= max into *out ("must be a non-negative number, got ..."). */
int ps_json_get_nonneg_number(const json_t *v, const char *path, double max, double *out,
                              struct ps_error *err);

/* A string into *out (borrowed from v). When nonempty, "" is an error. */
int ps_json_get_string(const json_t *v, const char *path, bool nonempty, const char **out,
                       struct ps_error *err);

/* A resource map {user_slots, cpu, gpu, memory, network} into *out (cpu to hundredths of a
 * core, rounded to the nearest; other resources integers). Every value must be >= 0. Omitted
 * keys become PS_RES_INFINITE when is_limits (formats.md 1: "omitted means unlimited"),
 * 0 otherwise. Unknown keys are errors; cpu is at most PS_JSON_MAX_CPU_CORES and the others
 * at most PS_JSON_MAX_INT. */
int ps_json_get_resources(const json_t *v, const char *path, bool is_limits,
                          struct ps_resources *out, struct ps_error *err);

#endif
