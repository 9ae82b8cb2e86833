/* preemptible.c — the three ordered allocation lists of an operation and their balancing.
 *
 * Allocations live in a slot array linked into three doubly linked lists; an open-addressing
 * table (linear probing, backward-shift deletion) maps ids to slots. Nothing iterates the table,
 * so its order never shows.
 */
#include "core/preemptible.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/starvation.h"

#define FAIR_EQUALS_DEMAND_EPSILON 1e-9

struct slot {
    int64_t id;
    int64_t start_time_ms;
    struct ps_resources usage;
    int cls;                 /* -1: a free slot */
    int prev, next;          /* in the class list; -1 at the ends; next also links free slots */
};

struct ps_preemptible {
    /* First, in one cache line: what a heartbeat's class reads touch (the preemptive stages
     * read count and a class of lists that are otherwise cold). */
    struct slot *slots;
    int *table;              /* slot index or -1; size table_cap (a power of two) */
    int table_cap;
    int slot_cap, free_head, running;
    int count[PS_ALLOC_CLASS_COUNT];
    int head[PS_ALLOC_CLASS_COUNT], tail[PS_ALLOC_CLASS_COUNT];
    struct ps_preemptible_config config;
    struct ps_share fair, demand;
    bool preemptible;
    struct ps_resources usage[PS_ALLOC_CLASS_COUNT];
    /* The last rebalance's second round moved nothing: the lists are a fixed point of the
     * balancing at the current thresholds, so another rebalance with them moves nothing. */
    bool settled;
};

const char *ps_alloc_class_name(int cls)
{
    switch (cls) {
    case PS_ALLOC_NON_PREEMPTIBLE: return "non_preemptible";
    case PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE: return "aggressively_preemptible";
    case PS_ALLOC_PREEMPTIBLE: return "preemptible";
    }
    return "unknown";
}

void ps_preemptible_config_init(struct ps_preemptible_config *c)
{
    memset(c, 0, sizeof *c);
    c->aggressive_threshold = 0.2;
    c->threshold = 1.0;
}

struct ps_preemptible *ps_preemptible_new(const struct ps_preemptible_config *config)
{
    /* aligned so that the hot fields at its start share one cache line */
    size_t size = (sizeof(struct ps_preemptible) + 63) / 64 * 64;
    struct ps_preemptible *p = aligned_alloc(64, size);
    if (!p)
        return NULL;
    memset(p, 0, size);
    p->config = *config;
    p->preemptible = true;
    p->free_head = -1;
    for (int c = 0; c < PS_ALLOC_CLASS_COUNT; c++)
        p->head[c] = p->tail[c] = -1;
    return p;
}

void ps_preemptible_free(struct ps_preemptible *p)
{
    if (!p)
        return;
    free(p->slots);
    free(p->table);
    free(p);
}

/* ---- id table --------------------------------------------------------------------------- */

static unsigned hash_id(int64_t id, int cap)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 32) & (unsigned)(cap - 1);
}

static int find_slot(const struct ps_preemptible *p, int64_t id)
{
    if (!p->table_cap)
        return -1;
    for (unsigned h = hash_id(id, p->table_cap);; h = (h + 1) & (unsigned)(p->table_cap - 1)) {
        int s = p->table[h];
        if (s < 0)
            return -1;
        if (p->slots[s].id == id)
            return s;
    }
}

static void table_put(struct ps_preemptible *p, int s)
{
    unsigned h = hash_id(p->slots[s].id, p->table_cap);
    while (p->table[h] >= 0)
        h = (h + 1) & (unsigned)(p->table_cap - 1);
    p->table[h] = s;
}

static int table_grow(struct ps_preemptible *p)
{
    int cap = p->table_cap ? 2 * p->table_cap : 16;
    int *t = malloc((size_t)cap * sizeof *t);
    if (!t)
        return -1;
    int *old = p->table, old_cap = p->table_cap;
    p->table = t;
    p->table_cap = cap;
    for (int i = 0; i < cap; i++)
        t[i] = -1;
    for (int i = 0; i < old_cap; i++)
        if (old[i] >= 0)
            table_put(p, old[i]);
    free(old);
    return 0;
}

static void table_delete(struct ps_preemptible *p, int64_t id)
{
    unsigned mask = (unsigned)(p->table_cap - 1);
    unsigned h = hash_id(id, p->table_cap);
    while (p->slots[p->table[h]].id != id)
        h = (h + 1) & mask;
    /* Backward shift: pull later members of the probe run into the hole. */
    unsigned hole = h;
    for (unsigned j = (h + 1) & mask; p->table[j] >= 0; j = (j + 1) & mask) {
        unsigned home = hash_id(p->slots[p->table[j]].id, p->table_cap);
        bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            p->table[hole] = p->table[j];
            hole = j;
        }
    }
    p->table[hole] = -1;
}

/* ---- lists ------------------------------------------------------------------------------ */

static void unlink_slot(struct ps_preemptible *p, int s)
{
    struct slot *x = &p->slots[s];
    if (x->prev >= 0)
        p->slots[x->prev].next = x->next;
    else
        p->head[x->cls] = x->next;
    if (x->next >= 0)
        p->slots[x->next].prev = x->prev;
    else
        p->tail[x->cls] = x->prev;
    p->count[x->cls]--;
}

static void push_back(struct ps_preemptible *p, int cls, int s)
{
    struct slot *x = &p->slots[s];
    x->cls = cls;
    x->next = -1;
    x->prev = p->tail[cls];
    if (x->prev >= 0)
        p->slots[x->prev].next = s;
    else
        p->head[cls] = s;
    p->tail[cls] = s;
    p->count[cls]++;
}

static void push_front(struct ps_preemptible *p, int cls, int s)
{
    struct slot *x = &p->slots[s];
    x->cls = cls;
    x->prev = -1;
    x->next = p->head[cls];
    if (x->next >= 0)
        p->slots[x->next].prev = s;
    else
        p->tail[cls] = s;
    p->head[cls] = s;
    p->count[cls]++;
}

/* ---- balancing -------------------------------------------------------------------------- */

static bool usage_below(const struct ps_preemptible *p, struct ps_resources u,
                        const struct ps_share *fs_bound)
{
    if (p->config.has_non_preemptible_usage_threshold) {
        bool strictly = true;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (!(p->config.non_preemptible_usage_threshold.v[r] > u.v[r]))
                strictly = false;
        if (strictly)
            return true;
    }
    struct ps_share share = ps_resources_to_share(&u, &p->config.total, 0.0, 1.0);
    return ps_strictly_dominates_non_blocked(&p->fair, &p->demand, fs_bound, &share);
}

/* Moves the boundary between lists left and right (left = less preemptible) so that exactly
 * the allocations whose predecessors' usage (starting from u = usage up to the end of left)
 * is below the bound stay on the left. */
static bool balance(struct ps_preemptible *p, int left, int right, struct ps_resources u,
                    const struct ps_share *bound)
{
    bool moved = false;
    while (p->tail[left] >= 0) {
        int s = p->tail[left];
        struct ps_resources next = ps_resources_sub(u, p->slots[s].usage);
        if (usage_below(p, next, bound))
            break;
        unlink_slot(p, s);
        push_front(p, right, s);
        p->usage[left] = ps_resources_sub(p->usage[left], p->slots[s].usage);
        p->usage[right] = ps_resources_add(p->usage[right], p->slots[s].usage);
        u = next;
        moved = true;
    }
    while (p->head[right] >= 0 && usage_below(p, u, bound)) {
        int s = p->head[right];
        unlink_slot(p, s);
        push_back(p, left, s);
        p->usage[right] = ps_resources_sub(p->usage[right], p->slots[s].usage);
        p->usage[left] = ps_resources_add(p->usage[left], p->slots[s].usage);
        u = ps_resources_add(u, p->slots[s].usage);
        moved = true;
    }
    return moved;
}

static void rebalance(struct ps_preemptible *p)
{
    struct ps_share aggressive = ps_share_scale(p->fair, p->config.aggressive_threshold);
    struct ps_share regular = p->preemptible ? ps_share_scale(p->fair, p->config.threshold)
                                             : ps_share_fill(HUGE_VAL);
    /* Two rounds: a big threshold change may move an allocation across both boundaries. */
    for (int round = 0; round < 2; round++) {
        bool moved = balance(p, PS_ALLOC_NON_PREEMPTIBLE, PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE,
                             p->usage[PS_ALLOC_NON_PREEMPTIBLE], &aggressive);
        moved |= balance(p, PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE, PS_ALLOC_PREEMPTIBLE,
                         ps_resources_add(p->usage[PS_ALLOC_NON_PREEMPTIBLE],
                                          p->usage[PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE]),
                         &regular);
        p->settled = !moved;
    }
}

static bool same_bits(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static bool same_config(const struct ps_preemptible_config *a, const struct ps_preemptible_config *b)
{
    return same_bits(&a->aggressive_threshold, &b->aggressive_threshold, sizeof(double)) &&
           same_bits(&a->threshold, &b->threshold, sizeof(double)) &&
           a->has_non_preemptible_usage_threshold == b->has_non_preemptible_usage_threshold &&
           ps_resources_equal(a->non_preemptible_usage_threshold, b->non_preemptible_usage_threshold) &&
           ps_resources_equal(a->total, b->total);
}

void ps_preemptible_update(struct ps_preemptible *p, const struct ps_share *fair_share,
                           const struct ps_share *demand_share,
                           const struct ps_preemptible_config *config)
{
    /* Nothing moves when the lists are settled and the thresholds' inputs keep their bits (a
     * fair share update that changed nothing for this operation: most of them). */
    if (p->settled && same_config(&p->config, config) &&
        same_bits(&p->fair, fair_share, sizeof *fair_share) &&
        same_bits(&p->demand, demand_share, sizeof *demand_share))
        return;
    p->config = *config;
    p->fair = *fair_share;
    p->demand = *demand_share;
    p->preemptible = !ps_share_near(p->fair, p->demand, FAIR_EQUALS_DEMAND_EPSILON);
    rebalance(p);
}

/* ---- changes ---------------------------------------------------------------------------- */

static int check_usage(struct ps_resources u, int64_t id, struct ps_error *err)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (u.v[r] < 0)
            return ps_error_set(err, PS_EINVAL, "allocation %lld: usage %s is negative",
                                (long long)id, ps_resource_name(r));
    return 0;
}

int ps_preemptible_add(struct ps_preemptible *p, int64_t id, int64_t start_time_ms,
                       struct ps_resources usage, struct ps_error *err)
{
    int rc = check_usage(usage, id, err);
    if (rc)
        return rc;
    if (find_slot(p, id) >= 0)
        return ps_error_set(err, PS_EINVAL, "allocation %lld is already running", (long long)id);
    if (p->free_head < 0) {
        int cap = p->slot_cap ? 2 * p->slot_cap : 16;
        struct slot *n = realloc(p->slots, (size_t)cap * sizeof *n);
        if (!n)
            return ps_error_set(err, PS_ENOMEM, "out of memory for allocation lists");
        p->slots = n;
        for (int i = cap - 1; i >= p->slot_cap; i--) {
            p->slots[i].cls = -1;
            p->slots[i].next = p->free_head;
            p->free_head = i;
        }
        p->slot_cap = cap;
    }
    /* Keep the table at most half full. */
    if (2 * (p->running + 1) > p->table_cap && table_grow(p))
        return ps_error_set(err, PS_ENOMEM, "out of memory for allocation lists");
    int s = p->free_head;
    p->free_head = p->slots[s].next;
    p->slots[s].id = id;
    p->slots[s].start_time_ms = start_time_ms;
    p->slots[s].usage = usage;
    table_put(p, s);
    push_back(p, PS_ALLOC_PREEMPTIBLE, s);
    p->usage[PS_ALLOC_PREEMPTIBLE] = ps_resources_add(p->usage[PS_ALLOC_PREEMPTIBLE], usage);
    p->running++;
    rebalance(p);
    return 0;
}

int ps_preemptible_set_usage(struct ps_preemptible *p, int64_t id, struct ps_resources usage,
                             struct ps_error *err)
{
    int rc = check_usage(usage, id, err);
    if (rc)
        return rc;
    int s = find_slot(p, id);
    if (s < 0)
        return ps_error_set(err, PS_EINVAL, "allocation %lld is not running", (long long)id);
    struct slot *x = &p->slots[s];
    p->usage[x->cls] = ps_resources_add(ps_resources_sub(p->usage[x->cls], x->usage), usage);
    x->usage = usage;
    rebalance(p);
    return 0;
}

int ps_preemptible_remove(struct ps_preemptible *p, int64_t id, struct ps_error *err)
{
    int s = find_slot(p, id);
    if (s < 0)
        return ps_error_set(err, PS_EINVAL, "allocation %lld is not running", (long long)id);
    struct slot *x = &p->slots[s];
    unlink_slot(p, s);
    p->usage[x->cls] = ps_resources_sub(p->usage[x->cls], x->usage);
    table_delete(p, id);
    x->cls = -1;
    x->next = p->free_head;
    p->free_head = s;
    p->running--;
    rebalance(p);
    return 0;
}

/* ---- views ------------------------------------------------------------------------------ */

int ps_preemptible_class(const struct ps_preemptible *p, int64_t id)
{
    int s = find_slot(p, id);
    return s < 0 ? -1 : p->slots[s].cls;
}

int ps_preemptible_slot(const struct ps_preemptible *p, int64_t id)
{
    return find_slot(p, id);
}

int ps_preemptible_class_at(const struct ps_preemptible *p, int64_t id, int slot)
{
    /* a free slot keeps the id it had: only a slot in use holding id is the one find_slot
     * would return (ids are unique among the allocations in use) */
    if (slot >= 0 && slot < p->slot_cap && p->slots[slot].cls >= 0 && p->slots[slot].id == id)
        return p->slots[slot].cls;
    return ps_preemptible_class(p, id);
}

bool ps_preemptible_get(const struct ps_preemptible *p, int64_t id, int64_t *start_time_ms,
                        struct ps_resources *usage)
{
    int s = find_slot(p, id);
    if (s < 0)
        return false;
    if (start_time_ms)
        *start_time_ms = p->slots[s].start_time_ms;
    if (usage)
        *usage = p->slots[s].usage;
    return true;
}

int ps_preemptible_count(const struct ps_preemptible *p, enum ps_alloc_class cls)
{
    return p->count[cls];
}

struct ps_resources ps_preemptible_usage(const struct ps_preemptible *p, enum ps_alloc_class cls)
{
    return p->usage[cls];
}

int ps_preemptible_running_count(const struct ps_preemptible *p)
{
    return p->running;
}

bool ps_preemptible_is_preemptible(const struct ps_preemptible *p)
{
    return p->preemptible;
}

int ps_preemptible_list(const struct ps_preemptible *p, enum ps_alloc_class cls, int64_t *out,
                        int cap)
{
    int n = 0;
    for (int s = p->head[cls]; s >= 0; s = p->slots[s].next, n++)
        if (n < cap)
            out[n] = p->slots[s].id;
    return n;
}
