#include "core/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void ps_strmap_init(struct ps_strmap *map)
{
    map->slots = NULL;
    map->capacity = 0;
    map->count = 0;
}

void ps_strmap_release(struct ps_strmap *map)
{
    free(map->slots);
    ps_strmap_init(map);
}

static size_t find_slot(const struct ps_strmap *map, const char *key)
{
    size_t mask = map->capacity - 1;
    size_t i = (size_t)hash(key) & mask;
    while (map->slots[i].key && strcmp(map->slots[i].key, key) != 0)
        i = (i + 1) & mask;
    return i;
}

void *ps_strmap_get(const struct ps_strmap *map, const char *key)
{
    if (map->capacity == 0)
        return NULL;
    size_t i = find_slot(map, key);
    return map->slots[i].key ? map->slots[i].value : NULL;
}

static int rehash(struct ps_strmap *map, size_t capacity)
{
    struct ps_strmap_slot *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return PS_ENOMEM;
    struct ps_strmap old = *map;
    map->slots = slots;
    map->capacity = capacity;
    map->count = 0;
    for (size_t i = 0; i < old.capacity; i++) {
        if (old.slots[i].key) {
            size_t j = find_slot(map, old.slots[i].key);
            map->slots[j] = old.slots[i];
            map->count++;
        }
    }
    free(old.slots);
    return 0;
}

int ps_strmap_put(struct ps_strmap *map, const char *key, void *value)
{
    if ((map->count + 1) * 4 > map->capacity * 3) {
        int rc = rehash(map, map->capacity ? 2 * map->capacity : 16);
        if (rc != 0)
            return rc;
    }
    size_t i = find_slot(map, key);
    if (!map->slots[i].key)
        map->count++;
    map->slots[i].key = key;
    map->slots[i].value = value;
    return 0;
}

void *ps_strmap_remove(struct ps_strmap *map, const char *key)
{
    if (map->capacity == 0)
        return NULL;
    size_t mask = map->capacity - 1;
    size_t i = find_slot(map, key);
    if (!map->slots[i].key)
        return NULL;
    void *value = map->slots[i].value;
    /* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!map->slots[j].key)
            break;
        size_t home = (size_t)hash(map->slots[j].key) & mask;
        /* Move j into the hole at i unless its home lies cyclically in (i, j]. */
        int in_range = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            map->slots[i] = map->slots[j];
            i = j;
        }
    }
    map->slots[i].key = NULL;
    map->slots[i].value = NULL;
    map->count--;
    return value;
}
