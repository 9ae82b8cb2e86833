/* fs_memo.c — fair shares by suggestion remembered from one update to the next.
 *
 * An operation's FSBS is a pure function of its demand, usage and limits shares, its guarantee
 * share (zero for operations: one that had another would not be remembered), its gang flag and
 * the gang option: fs_element_fsbs on an operation reads nothing else and writes nothing but
 * the function. A pool's (normal mode) is a function of its children's FSBS in their order,
 * their weights, its FIFO mode and its own limits and guarantee shares, and it also leaves the
 * pool's MFFBS and the right bound of its FSBFF (the top-down pass reads them). The root's are
 * the same function of the same bits but for the stand-ins exact at 1.0 that fs_element_fsbs
 * may give it (fs_functions.c), so its key has its own flag; on the overloaded day a quarter
 * of the updates change no operation's function and find the root's.
 *
 * Between two updates most elements keep every one of these bits (only operations whose jobs
 * started or ended move, and the pools above them), and on a busy cluster hundreds of
 * operations wait with the same demand. So each element is looked up by the exact bits of what
 * its functions are a function of, and what was computed before is copied: the result is the
 * same bit for bit whether it was found or computed. A child's FSBS enters its pool's key as
 * the id of the entry that holds it (two elements with the same id have the same function);
 * an element whose function was not remembered has id 0 and its pool is computed.
 *
 * One table whose entries lie in one buffer that only grows or moves between updates, so an
 * element takes the entry's functions as its own, without a copy, until the next update
 * begins. Each entry notes the last update that used it; once the others are a quarter of
 * those, the next update begins by moving the used ones down over the rest, in the same
 * buffer and slots, so what is kept stays within about one update's distinct elements and a
 * steady state neither allocates nor faults pages in. (Entries from more updates back would
 * not pay: on the overloaded day 72% of the operations' misses were never seen before and
 * most of the rest over 256 updates earlier, and no pool's or root's key came back.)
 */
#include <stdlib.h>
#include <string.h>

#include "core/fs_internal.h"

enum { DIM = PS_RES_COUNT, STRIDE = PS_RES_COUNT + 1, FIXED = 4 * PS_RES_COUNT + 2 };

/* The key: the shares (demand, usage, limits, guarantee), flags, child count, then per child
 * its entry id and its weight. As 64-bit words, compared exactly. */
struct key {
    uint64_t *w;
    size_t n;
};

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Four independent lanes in registers (one multiply chain over the 22 words of an operation's
 * key was a visible part of the lookup), folded at the end. */
static uint64_t key_hash(const struct key *k)
{
    const uint64_t m = 0xff51afd7ed558ccdull;
    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full, c = 0x165667b19e3779f9ull,
             d = 0x27d4eb2f165667c5ull;
    const uint64_t *w = k->w;
    size_t i = 0;
    for (; i + 4 <= k->n; i += 4) {
        a = (a ^ w[i]) * m;
        b = (b ^ w[i + 1]) * m;
        c = (c ^ w[i + 2]) * m;
        d = (d ^ w[i + 3]) * m;
    }
    for (; i < k->n; i++)
        a = (a ^ w[i]) * m;
    uint64_t x = a ^ (b >> 17) ^ (c << 23) ^ (d >> 41) ^ (uint64_t)k->n;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 29;
    return x;
}

static void put_share(uint64_t *w, struct ps_share s)
{
    for (int r = 0; r < DIM; r++)
        w[r] = bits_of(s.v[r]);
}

/* The key of e into u->memo_key; false when e's functions are not remembered. */
static bool key_of(struct ps_fs_update *u, const struct fs_elem *e, struct key *k)
{
    bool op = e->kind == PS_ELEM_OPERATION;
    if (!op && u->options->enable_improved_fair_share_by_fit_factor_computation)
        return false;
    size_t n = FIXED + (op ? 0 : 2 * (size_t)e->child_count);
    if (n > u->memo_key_cap) {
        uint64_t *w = realloc(u->memo_key, n * sizeof *w);
        if (!w)
            return false;
        u->memo_key = w;
        u->memo_key_cap = n;
    }
    uint64_t *w = u->memo_key;
    struct ps_share g = fs_guarantee_share(e);
    put_share(w, op ? e->out->demand_share : ps_share_fill(0.0));
    put_share(w + DIM, op ? e->out->usage_share : ps_share_fill(0.0));
    put_share(w + 2 * DIM, e->out->limits_share);
    put_share(w + 3 * DIM, g);
    if (op) {
        for (int r = 0; r < DIM; r++)
            if (w[3 * DIM + r] != 0)
                return false;
        w[4 * DIM] = 1u | (e->in->is_gang ? 2u : 0u) |
                     (u->options->enable_step_function_for_gang_operations ? 4u : 0u);
        w[4 * DIM + 1] = 0;
    } else {
        w[4 * DIM] = (e->is_fifo ? 8u : 16u) | (e->kind == PS_ELEM_ROOT ? 32u : 0u);
        w[4 * DIM + 1] = (uint64_t)e->child_count;
        for (int c = 0; c < e->child_count; c++) {
            const struct fs_elem *ch = &u->el[u->children[e->first_child + c]];
            if (ch->memo_id == 0)
                return false;
            w[FIXED + 2 * c] = ch->memo_id;
            w[FIXED + 2 * c + 1] = bits_of(ch->weight);
        }
    }
    k->w = w;
    k->n = n;
    return true;
}

static struct fs_memo_entry *entry_at(const struct fs_memo_table *t, const struct fs_memo_slot *s)
{
    return (struct fs_memo_entry *)(t->data + s->offset - 1);
}

/* The slot of the key in the table, or the empty slot where it would go. */
static struct fs_memo_slot *find(const struct fs_memo_table *t, const struct key *k, uint64_t h)
{
    size_t mask = t->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct fs_memo_slot *s = &t->slots[i];
        if (!s->offset)
            return s;
        if (s->hash == h) {
            const struct fs_memo_entry *e = entry_at(t, s);
            if (e->key_n == k->n && memcmp(e->key, k->w, k->n * sizeof *k->w) == 0)
                return s;
        }
    }
}

static size_t entry_bytes(const struct fs_memo_entry *e)
{
    return sizeof *e + e->key_n * sizeof(uint64_t) +
           ((size_t)e->fsbs_n * STRIDE + (size_t)e->mffbs_n * 2) * sizeof(double);
}

static void slot_put(struct fs_memo_slot *slots, size_t mask, struct fs_memo_slot s)
{
    size_t j = s.hash & mask;
    while (slots[j].offset)
        j = (j + 1) & mask;
    slots[j] = s;
}

/* Twice as many slots (when half full). False on allocation failure (t unchanged). */
static bool grow_slots(struct fs_memo_table *t)
{
    size_t cap = t->cap ? 2 * t->cap : 256;
    struct fs_memo_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].offset)
            slot_put(slots, cap - 1, t->slots[i]);
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return true;
}

static struct fs_memo_entry *entry_in(const struct fs_memo_table *t, size_t offset)
{
    return (struct fs_memo_entry *)(t->data + offset);
}

/* Keeps only the entries the last update used, in place: they move down over the others in
 * the order they were stored (so an entry only moves to a lower offset, over entries already
 * passed), go into cap slots (the same array when cap is unchanged: a steady state neither
 * allocates nor touches new pages), and memo_last follows them. False (t unchanged) when new
 * slots cannot be had. */
static bool compact(struct ps_fs_update *u, size_t cap)
{
    struct fs_memo_table *t = &u->memo;
    struct fs_memo_slot *slots = t->slots;
    if (cap != t->cap) {
        slots = calloc(cap, sizeof *slots);
        if (!slots)
            return false;
        free(t->slots);
    } else {
        memset(slots, 0, cap * sizeof *slots);
    }
    size_t bytes = 0;
    for (size_t off = 0; off < t->bytes; off += entry_bytes(entry_in(t, off))) {
        struct fs_memo_entry *e = entry_in(t, off);
        e->to = e->used == t->update ? bytes + 1 : 0;
        if (e->to)
            bytes += entry_bytes(e);
    }
    for (size_t i = 0; i < u->memo_last_cap; i++)
        if (u->memo_last[i])
            u->memo_last[i] = entry_in(t, u->memo_last[i] - 1)->to;
    size_t count = 0;
    for (size_t off = 0; off < t->bytes;) {
        struct fs_memo_entry *e = entry_in(t, off);
        size_t b = entry_bytes(e), to = e->to;
        if (to) {
            slot_put(slots, cap - 1, (struct fs_memo_slot){.hash = e->hash, .offset = to});
            if (to - 1 != off)
                memmove(t->data + to - 1, e, b);
            count++;
        }
        off += b;
    }
    t->slots = slots;
    t->cap = cap;
    t->count = count;
    t->bytes = bytes;
    return true;
}

static size_t plf_bytes(const struct ps_plf *f)
{
    return (size_t)f->n * (size_t)(f->dim + 1) * sizeof(double);
}

static void mark_used(struct fs_memo_table *t, struct fs_memo_entry *e)
{
    if (e->used == t->update)
        return;
    e->used = t->update;
    t->live_count++;
    t->live_bytes += entry_bytes(e);
}

/* Stores an entry (absent from t): key, FSBS, and for pools MFFBS and the FSBFF's right bound.
 * Its offset + 1, or 0 when it is not stored: no memory, or no room left in the data for this
 * update (the data only grows between updates, when no function of it is in use). */
static size_t store(struct fs_memo_table *t, const struct key *k, uint64_t h, const struct fs_memo_value *v)
{
    if ((t->count + 1) * 2 > t->cap && !grow_slots(t))
        return 0;
    size_t kb = k->n * sizeof *k->w, fb = plf_bytes(&v->fsbs), mb = v->mffbs.a ? plf_bytes(&v->mffbs) : 0;
    size_t need = sizeof(struct fs_memo_entry) + kb + fb + mb;
    t->wanted += need;
    if (t->bytes + need > t->data_cap)
        return 0;
    struct fs_memo_entry *e = (struct fs_memo_entry *)(t->data + t->bytes);
    *e = (struct fs_memo_entry){.id = v->id, .hash = h, .key_n = k->n, .fsbs_n = v->fsbs.n,
                                .mffbs_n = v->mffbs.a ? v->mffbs.n : 0, .fsbff_right = v->fsbff_right};
    char *d = (char *)e->key;
    memcpy(d, k->w, kb);
    memcpy(d + kb, v->fsbs.a, fb);
    if (mb)
        memcpy(d + kb + fb, v->mffbs.a, mb);
    struct fs_memo_slot *s = find(t, k, h);
    *s = (struct fs_memo_slot){.hash = h, .offset = t->bytes + 1};
    t->bytes += need;
    t->count++;
    mark_used(t, e);
    return s->offset;
}

static struct fs_memo_value value_of(const struct fs_memo_entry *e)
{
    double *fsbs = (double *)(e->key + e->key_n);
    double *mffbs = fsbs + (size_t)e->fsbs_n * STRIDE;
    return (struct fs_memo_value){
        .id = e->id,
        .fsbs = {fsbs, e->fsbs_n, DIM},
        .mffbs = {e->mffbs_n ? mffbs : NULL, e->mffbs_n, 1},
        .fsbff_right = e->fsbff_right,
    };
}

/* Between updates: keeps only the entries the last update used once the others are a quarter
 * of them (a compaction follows a quarter as many new entries as it keeps: O(1) per entry),
 * then makes room in the data for the whole next round, so that a steady state does not
 * allocate. On failure the entries are kept (or stores refused for room): the next update
 * tries again. */
static void compact_or_grow(struct ps_fs_update *u, size_t room)
{
    struct fs_memo_table *t = &u->memo;
    size_t keep_count = t->live_count + t->live_count / 4 + 16, keep_bytes = t->live_bytes + t->live_bytes / 4 + 4096;
    bool compacted = false;
    if (t->count > keep_count || t->bytes > keep_bytes) {
        size_t cap = 256;
        while (cap < 4 * t->live_count)
            cap *= 2;
        compacted = compact(u, cap);
    }
    /* After a compaction the data is sized for what was kept plus the room (more than the
     * kept bytes: keep_bytes), but resized only when half as large again: steady state's
     * small swings of the room keep the buffer. */
    size_t need = t->bytes + room, cap = compacted ? keep_bytes + room : need + need / 4;
    if (need <= t->data_cap && !(compacted && t->data_cap > cap + cap / 2))
        return;
    char *d = realloc(t->data, cap);
    if (d) {
        t->data = d;
        t->data_cap = cap;
    }
}

/* memo_last for count elements: grown (zeroed). */
static void index_begin(struct ps_fs_update *u, int count)
{
    if ((size_t)count <= u->memo_last_cap)
        return;
    size_t *last = realloc(u->memo_last, (size_t)count * sizeof *last);
    if (!last)
        return;   /* elements past the capacity are only looked up by hash */
    memset(last + u->memo_last_cap, 0, ((size_t)count - u->memo_last_cap) * sizeof *last);
    u->memo_last = last;
    u->memo_last_cap = (size_t)count;
}

static void remember(struct ps_fs_update *u, const struct fs_elem *e, size_t offset)
{
    size_t i = (size_t)(e - u->el);
    if (i < u->memo_last_cap)
        u->memo_last[i] = offset;
}

void fs_memo_prefetch(const struct ps_fs_update *u, int i)
{
    if ((size_t)i >= u->memo_last_cap || !u->memo_last[i])
        return;
    const char *p = u->memo.data + u->memo_last[i] - 1;
    for (size_t off = 0; off < sizeof(struct fs_memo_entry) + FIXED * sizeof(uint64_t); off += 64)
        __builtin_prefetch(p + off);
}

void fs_memo_begin(struct ps_fs_update *u)
{
    struct fs_memo_table *t = &u->memo;
    if (!u->memo_on)
        return;
    /* Room for twice what the last update stored or wanted to. */
    compact_or_grow(u, 2 * t->wanted > 65536 ? 2 * t->wanted : 65536);
    index_begin(u, u->count);
    t->update++;
    t->live_count = 0;
    t->live_bytes = 0;
    t->wanted = 0;
}

/* Whether operation e's index now holds its key in memo_last (struct fs_op_prev). */
static void note(struct ps_fs_update *u, const struct fs_elem *e, bool ok)
{
    int i = (int)(e - u->el);
    if (e->kind == PS_ELEM_OPERATION && i < u->op_prev_cap)
        u->op_prev[i].memo_ok = ok;
}

bool fs_memo_find(struct ps_fs_update *u, const struct fs_elem *e, struct fs_memo_value *v)
{
    struct key k;
    u->memo_hash_valid = false;
    if (!u->memo_on)
        return false;
    size_t i = (size_t)(e - u->el);
    /* An operation whose inputs kept their bits since the last run at its index, which found
     * or stored the entry there: that entry has its key. */
    if (e->memo_kept && i < u->memo_last_cap && u->memo_last[i]) {
        struct fs_memo_entry *entry = (struct fs_memo_entry *)(u->memo.data + u->memo_last[i] - 1);
        mark_used(&u->memo, entry);
        *v = value_of(entry);
        return true;
    }
    if (!key_of(u, e, &k)) {
        note(u, e, false);
        return false;
    }
    /* Most elements keep their index and their inputs' bits: the entry the element at this
     * index had last time is compared first, without hashing or probing. */
    if (i < u->memo_last_cap && u->memo_last[i]) {
        struct fs_memo_entry *entry = (struct fs_memo_entry *)(u->memo.data + u->memo_last[i] - 1);
        if (entry->key_n == k.n && memcmp(entry->key, k.w, k.n * sizeof *k.w) == 0) {
            mark_used(&u->memo, entry);
            *v = value_of(entry);
            note(u, e, true);
            return true;
        }
    }
    note(u, e, false);
    uint64_t h = key_hash(&k);
    u->memo_hash = h;
    u->memo_hash_valid = true;
    struct fs_memo_table *t = &u->memo;
    if (!t->cap)
        return false;
    struct fs_memo_slot *s = find(t, &k, h);
    if (!s->offset)
        return false;
    remember(u, e, s->offset);
    note(u, e, i < u->memo_last_cap);
    struct fs_memo_entry *entry = entry_at(t, s);
    mark_used(t, entry);
    *v = value_of(entry);
    return true;
}

uint64_t fs_memo_store(struct ps_fs_update *u, const struct fs_elem *e, struct fs_memo_value *v)
{
    struct key k;
    if (!u->memo_hash_valid || !key_of(u, e, &k))
        return 0;
    v->id = ++u->memo_serial;
    size_t offset = store(&u->memo, &k, u->memo_hash, v);
    if (!offset)
        return 0;
    remember(u, e, offset);
    note(u, e, (size_t)(e - u->el) < u->memo_last_cap);
    return v->id;
}

int64_t fs_memo_bytes(const struct ps_fs_update *u)
{
    const struct fs_memo_table *t = &u->memo;
    return (int64_t)((u->memo_key_cap + u->memo_last_cap) * sizeof(uint64_t) + t->cap * sizeof(struct fs_memo_slot) +
                     t->data_cap + (size_t)u->op_prev_cap * sizeof(struct fs_op_prev) +
                     (size_t)u->value_prev_cap * sizeof(struct fs_value_prev));
}

void ps_fs_update_set_memo(struct ps_fs_update *u, bool on)
{
    u->memo_on = on;
    if (!on)
        fs_memo_release(u);
}

void fs_memo_release(struct ps_fs_update *u)
{
    struct fs_memo_table *t = &u->memo;
    free(t->slots);
    free(t->data);
    memset(t, 0, sizeof *t);
#define DROP(array, cap) (free(array), (array) = NULL, (cap) = 0)
    DROP(u->memo_key, u->memo_key_cap);
    DROP(u->memo_last, u->memo_last_cap);
    DROP(u->op_prev, u->op_prev_cap);
    DROP(u->value_prev, u->value_prev_cap);
#undef DROP
}
