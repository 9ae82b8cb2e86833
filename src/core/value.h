/* value.h — a small tagged value (null, bool, number, string, list, map).
 *
 * It is the common currency of the configuration setters and getters (tree config, pool config,
 * operation spec): the JSON scenario parser, the HTTP API (Cypress-like `@attribute` get/set,
 * YSON or JSON bodies) and the tests all build a struct ps_value and hand it to one table-driven
 * setter, so per-key code exists once (attr.h).
 *
 * Ownership: a value owns everything it points to. Build values with the constructors below and
 * free them with ps_value_release; never mix with pointers you do not own. Map keys keep their
 * insertion order (getters produce keys in table order), so printing is deterministic.
 */
#ifndef PS_CORE_VALUE_H
#define PS_CORE_VALUE_H

#include <stdbool.h>

enum ps_value_type {
    PS_VALUE_NULL = 0,   /* YSON entity `#`, JSON null: "unset / reset to default" */
    PS_VALUE_BOOL,
    PS_VALUE_NUMBER,     /* every number is a double; integer keys require an integral value */
    PS_VALUE_STRING,
    PS_VALUE_LIST,
    PS_VALUE_MAP,
};

struct ps_value {
    enum ps_value_type type;
    bool boolean;                /* PS_VALUE_BOOL */
    double number;               /* PS_VALUE_NUMBER */
    char *string;                /* PS_VALUE_STRING, NUL-terminated, owned */
    int count;                   /* PS_VALUE_LIST / PS_VALUE_MAP: number of items */
    int capacity;
    struct ps_value *items;      /* list items, or map values (owned) */
    char **keys;                 /* map keys, parallel to items (owned); NULL for lists */
};

/* Constructors. Only ps_value_string allocates; out of memory it yields a null value, so a
 * caller for whom that matters checks the type (parsers use ps_value_put_string, which
 * reports PS_ENOMEM). */
struct ps_value ps_value_null(void);
struct ps_value ps_value_bool(bool b);
struct ps_value ps_value_number(double x);
struct ps_value ps_value_string(const char *s);   /* copies s; s must not be NULL */
struct ps_value ps_value_list(void);              /* empty list */
struct ps_value ps_value_map(void);               /* empty map */

/* Appends item to a list, taking ownership of item (it is moved: *item becomes null).
 * Returns 0 or PS_ENOMEM (item is then released). */
int ps_value_append(struct ps_value *list, struct ps_value *item);

/* Adds key -> item to a map (moving item), replacing an existing key in place. Returns 0 or
 * PS_ENOMEM (item is then released). */
int ps_value_put(struct ps_value *map, const char *key, struct ps_value *item);

/* Convenience for building maps in tests and parsers: put a number / string / bool. */
int ps_value_put_number(struct ps_value *map, const char *key, double x);
int ps_value_put_string(struct ps_value *map, const char *key, const char *s);
int ps_value_put_bool(struct ps_value *map, const char *key, bool b);

/* The value of key in a map, or NULL (also for non-maps). Borrowed: valid while map lives
 * unchanged. */
const struct ps_value *ps_value_find(const struct ps_value *map, const char *key);

/* A deep copy of map without the keys listed in skip (NULL-terminated): the configuration
 * part of a document that also carries state (a snapshot's pool: name, parent, volumes).
 * Returns 0 or PS_ENOMEM (*out is then null). */
int ps_value_map_without(const struct ps_value *map, const char *const *skip,
                         struct ps_value *out);

/* Deep copy. Returns 0 or PS_ENOMEM (dst is then null). */
int ps_value_copy(struct ps_value *dst, const struct ps_value *src);

/* Deep equality (numbers compared with ==, map key order ignored). */
bool ps_value_equal(const struct ps_value *a, const struct ps_value *b);

/* Frees what v owns and makes it null. NULL is a no-op. */
void ps_value_release(struct ps_value *v);

/* "null", "boolean", "number", "string", "list", "map". */
const char *ps_value_type_name(enum ps_value_type type);

/* Renders a short, user-readable form of v for error messages into buf (always
 * NUL-terminated, truncated with "..." when long): numbers as %.17g trimmed, strings quoted,
 * lists and maps in JSON-like syntax. Returns buf. */
char *ps_value_describe(const struct ps_value *v, char *buf, int size);

#endif
