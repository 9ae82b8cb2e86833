/* attr.h — table-driven configuration keys: one generic setter, getter and enumerator.
 *
 * A configuration struct (tree config, pool config, operation spec) is described by a table of
 * struct ps_attr: name, aliases, kind, offset, range. The generic functions below then give
 * every key the same behaviour, whoever calls them (JSON scenario parser, HTTP `@attribute`
 * API, tests):
 *   - type and range validation with a message naming the key, the value and the reason,
 *     e.g. `weight: must be in [1.4901161193847656e-08, 67108864], got -1`;
 *   - a null value (JSON null, YSON `#`) resets the key to its default (optional keys become
 *     unset);
 *   - paths with `/` reach into groups and resource maps: `integral_guarantees/resource_flow`,
 *     `resource_limits/cpu`; setting a group to a map replaces the whole group;
 *   - a failed set or apply leaves the object unchanged;
 *   - a map that names one key twice (the key and an alias, or two aliases) is refused, as
 *     upstream: `min_share_resources and strong_guarantee_resources: aliases of one key, give
 *     only one`;
 *   - keys a table does not know are errors for apply, or, for documents that carry other
 *     readers' keys (operation specs), skipped by apply and listed by ps_attr_unrecognized.
 * Cross-key rules (e.g. aggressive threshold <= threshold) belong to each config's validate
 * function, run by its callers after the keys are applied.
 */
#ifndef PS_CORE_ATTR_H
#define PS_CORE_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/acl.h"
#include "core/error.h"
#include "core/fair_share.h"
#include "core/resources.h"
#include "core/value.h"

/* Optional scalars: `set` false means "not specified" (a default or an inherited value
 * applies; the getter returns null). */
struct ps_opt_bool { bool set; bool value; };
struct ps_opt_int { bool set; int64_t value; };
struct ps_opt_double { bool set; double value; };

/* fifo_sort_parameters: 1..PS_FIFO_PARAM_MAX distinct parameters in priority order. */
struct ps_fifo_list {
    int count;
    enum ps_fifo_param items[PS_FIFO_PARAM_MAX];
};

/* A list of at most PS_DOUBLE_LIST_MAX numbers, each within the attribute's range
 * (per_pool_satisfaction_profiling_quantiles). */
#define PS_DOUBLE_LIST_MAX 20
struct ps_double_list {
    int count;
    double items[PS_DOUBLE_LIST_MAX];
};

/* An owned list of owned strings (acl, pool_trees). */
struct ps_string_list {
    int count;
    char **items;
};

enum ps_attr_kind {
    PS_ATTR_BOOL,         /* bool */
    PS_ATTR_OPT_BOOL,     /* struct ps_opt_bool */
    PS_ATTR_INT,          /* int64_t; integral numbers only */
    PS_ATTR_INT32,        /* int; integral numbers only (the range must fit an int) */
    PS_ATTR_OPT_INT,      /* struct ps_opt_int */
    PS_ATTR_DOUBLE,       /* double */
    PS_ATTR_OPT_DOUBLE,   /* struct ps_opt_double */
    PS_ATTR_STRING,       /* char *, owned, never NULL ("" allowed unless PS_ATTR_NONEMPTY) */
    PS_ATTR_OPT_STRING,   /* char *, owned, NULL when unset */
    PS_ATTR_ENUM,         /* int, one of enum_names */
    PS_ATTR_OPT_ENUM,     /* struct ps_opt_int holding the enum index */
    PS_ATTR_RESOURCES,    /* struct ps_resources_opt: map resource -> number >= 0 */
    PS_ATTR_FIFO_LIST,    /* struct ps_fifo_list */
    PS_ATTR_STRING_LIST,  /* struct ps_string_list */
    PS_ATTR_DOUBLE_LIST,  /* struct ps_double_list: each item within [min, max] */
    PS_ATTR_GROUP,        /* a nested struct described by `group` */
    PS_ATTR_MAP,          /* struct ps_value, always a map (empty by default) whose entries are
                           * kept as given; their reader validates them (pool_config_presets).
                           * `key/entry` sets or reads one entry (null removes it) */
    PS_ATTR_ACL,          /* struct ps_acl (core/acl.h): a list of ACEs, empty by default */
};

#define PS_ATTR_MIN_OPEN 1u   /* the value must be > min (default: >= min) */
#define PS_ATTR_MAX_OPEN 2u   /* the value must be < max (default: <= max) */
#define PS_ATTR_NONEMPTY 4u   /* strings and lists must not be empty */
#define PS_ATTR_NO_RANGE 8u   /* numbers: no range check (min/max ignored) */
#define PS_ATTR_RUNTIME 16u   /* may change while the object is in use (an operation's
                               * update_op_parameters) */
#define PS_ATTR_SKIP_UNKNOWN 32u /* GROUP: unknown keys inside are skipped, not errors
                                  * (they are for ps_attr_unrecognized to report) */
#define PS_ATTR_SPELLINGS 64u /* the aliases are other spellings of the name, not upstream
                               * aliases: with a table's spelling_offset, a value given under
                               * one is kept under the canonical name and never clashes */

struct ps_attr_table;

struct ps_attr {
    const char *name;                  /* canonical key */
    const char *alias[3];              /* accepted alternative names, NULL-terminated */
    enum ps_attr_kind kind;
    size_t offset;                     /* of the field inside the struct */
    unsigned flags;
    double min, max;                   /* numeric range (inclusive unless *_OPEN) */
    const char *const *enum_names;     /* ENUM: names by index */
    int enum_count;
    /* STRING, OPT_STRING, STRING_LIST items: extra check; returns 0 or PS_EINVAL with a
     * message naming key and value. */
    int (*check)(const char *key, const char *value, struct ps_error *err);
    const struct ps_attr_table *group; /* GROUP */
    ptrdiff_t presence_offset;         /* GROUP: offset of a bool "present" flag, or -1 */
};

struct ps_attr_table {
    const char *what;                  /* "tree config", for messages */
    const struct ps_attr *attrs;
    int count;
    size_t size;                       /* sizeof the described struct */
    int (*init)(void *obj);            /* sets every default; 0 or PS_ENOMEM (nothing owned) */
    /* Tables whose objects keep the name each key was set with (pools, as upstream's Cypress
     * pool objects): the offset of an unsigned char per attribute (in table order, zeroed by
     * init), or 0 for none. 0: not set by any name; 1: the canonical name; 2 + k: alias k.
     * ps_attr_set and ps_attr_apply then refuse setting a key under one name while it is set
     * under another ("attempt to set the same attribute with different alias"; reset it
     * first), a reset (null) forgets the name, and ps_attr_to_value answers each key under
     * the name it was set with. */
    size_t spelling_offset;
    /* Tables whose objects keep keys the table does not know (pools, as upstream's Cypress
     * keeps any attribute a user sets on a pool, with no scheduling meaning): the offset of a
     * struct ps_value map holding them (a map after init), or 0 for none (unknown keys are
     * errors). ps_attr_set and ps_attr_apply store an unknown top-level key there as given
     * (null removes it; a path inside one is refused), ps_attr_get reads it back and
     * ps_attr_to_value lists them after the table's keys; copy and release include it. */
    size_t custom_offset;
};

/* A ready-made ps_attr.check for tag-filter keys (scheduling_tag_filter): value must parse as a
 * boolean tag formula (core/formula.h); PS_EINVAL names key and value otherwise. */
int ps_attr_check_filter(const char *key, const char *value, struct ps_error *err);

/* Levenshtein distance of a and b, capped: anything above cap is cap + 1 (so is any string
 * longer than 64). Unknown-key messages use it to suggest the key meant:
 * `wieght: unknown key of the pool config (did you mean "weight"?)`. */
int ps_edit_distance(const char *a, const char *b, int cap);

/* The attribute named `name` (canonical or alias), or NULL. */
const struct ps_attr *ps_attr_find(const struct ps_attr_table *table, const char *name);

/* Sets the key at path (see the file comment). value NULL or null resets to the default.
 * Returns 0, PS_EINVAL (unknown key, wrong type, out of range; err names key, value and
 * reason) or PS_ENOMEM. On error obj is unchanged. */
int ps_attr_set(const struct ps_attr_table *table, void *obj, const char *path,
                const struct ps_value *value, struct ps_error *err);

/* Applies every entry of a map, in the map's order, atomically: on error nothing changed.
 * map NULL is a no-op. When `skip_unknown` is true, keys the table does not know are ignored
 * (operation specs carry controller keys); otherwise they are errors. */
int ps_attr_apply(const struct ps_attr_table *table, void *obj, const struct ps_value *map,
                  bool skip_unknown, struct ps_error *err);

/* For inputs that hold settings only (poolsched's own documents, where a misspelt key must not
 * pass): PS_EINVAL naming the first custom attribute of obj (custom_offset) as an unknown key,
 * with the setting it is nearest to; 0 when obj has none. */
int ps_attr_refuse_custom(const struct ps_attr_table *table, const void *obj,
                          struct ps_error *err);

/* The keys of map (recursively, into groups given as maps) that the table does not know, as a
 * map of the same shape holding the unrecognized subtrees: {"wieght": 2, "job_cpu_monitor":
 * {"smothing": 1}}. `extra` lists further top-level keys that are known although not in the
 * table (NULL-terminated, may be NULL). *out is an empty map when every key is known.
 * Returns 0 or PS_ENOMEM. */
int ps_attr_unrecognized(const struct ps_attr_table *table, const struct ps_value *map,
                         const char *const *extra, struct ps_value *out);

/* Checks every number of obj (recursively) against its table range, for structs filled in by
 * code rather than through set/apply. Messages name `prefix/key` as set does. */
int ps_attr_check_ranges(const struct ps_attr_table *table, const void *obj, const char *prefix,
                         struct ps_error *err);

/* Reads the key at path into *out (a new owned value; null for unset optionals). Returns 0,
 * PS_EINVAL for an unknown key, or PS_ENOMEM. */
int ps_attr_get(const struct ps_attr_table *table, const void *obj, const char *path,
                struct ps_value *out, struct ps_error *err);

/* Every key with its value, as a map in table order (groups as nested maps). */
int ps_attr_to_value(const struct ps_attr_table *table, const void *obj, struct ps_value *out);

/* Deep copy of src into dst (dst uninitialised). Returns 0 or PS_ENOMEM (dst then holds
 * nothing to release). */
int ps_attr_copy(const struct ps_attr_table *table, void *dst, const void *src);

/* Fills every optional field of dst that is unset (ps_opt_* without `set`, a NULL
 * OPT_STRING, each resource of a RESOURCES field without its bit) with src's value where src
 * has one; other kinds cannot tell "unset" from a default and are left alone. Both objects are
 * described by table (which may name a subset of their fields). A layer of defaults under an
 * explicit config: pool config presets (pool_preset.h). Returns 0 or PS_ENOMEM (dst then
 * holds a consistent mix, every field either its old or its new value). */
int ps_attr_overlay(const struct ps_attr_table *table, void *dst, const void *src);

/* Frees what obj owns (not obj itself) and leaves it unusable until init or copy. */
void ps_attr_release(const struct ps_attr_table *table, void *obj);

#endif
