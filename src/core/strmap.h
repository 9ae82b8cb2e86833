/* strmap.h — a string-keyed hash map for lookups by name or id (engine-internal).
 *
 * Open addressing with linear probing and backward-shift deletion. Keys are borrowed: they
 * must stay valid and unchanged while present (they are the names owned by the stored
 * objects). The map is only ever used for lookups, never iterated for output, so hash order
 * cannot leak into results (ARCHITECTURE.md, determinism).
 */
#ifndef PS_CORE_STRMAP_H
#define PS_CORE_STRMAP_H

#include <stddef.h>

struct ps_strmap_slot {
    const char *key;   /* NULL: empty */
    void *value;
};

struct ps_strmap {
    struct ps_strmap_slot *slots;
    size_t capacity;   /* 0 or a power of two */
    size_t count;
};

void ps_strmap_init(struct ps_strmap *map);
void ps_strmap_release(struct ps_strmap *map);

/* The value stored under key, or NULL. */
void *ps_strmap_get(const struct ps_strmap *map, const char *key);

/* Stores key -> value (replacing an existing key's value). Returns 0 or PS_ENOMEM. */
int ps_strmap_put(struct ps_strmap *map, const char *key, void *value);

/* Removes key; returns its value or NULL when absent. */
void *ps_strmap_remove(struct ps_strmap *map, const char *key);

#endif
