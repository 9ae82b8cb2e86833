#include "core/arena.h"

#include <stdlib.h>
#include <string.h>

void ps_arena_init(struct ps_arena *a, size_t block_size)
{
    memset(a, 0, sizeof *a);
    a->block_size = block_size;
}

void ps_arena_release(struct ps_arena *a)
{
    for (int i = 0; i < a->count; i++)
        free(a->blocks[i].mem);
    free(a->blocks);
    memset(a, 0, sizeof *a);
}

void ps_arena_reset(struct ps_arena *a)
{
    a->cur = 0;
    a->used = 0;
}

static bool insert_block(struct ps_arena *a, int at, size_t size)
{
    if (a->count == a->cap) {
        int cap = a->cap ? 2 * a->cap : 8;
        struct ps_arena_block *b = realloc(a->blocks, (size_t)cap * sizeof *b);
        if (!b)
            return false;
        a->blocks = b;
        a->cap = cap;
    }
    unsigned char *mem = malloc(size);
    if (!mem)
        return false;
    memmove(a->blocks + at + 1, a->blocks + at, (size_t)(a->count - at) * sizeof *a->blocks);
    a->blocks[at].mem = mem;
    a->blocks[at].size = size;
    a->count++;
    return true;
}

/* A block for a request: the usual size, or the request and an eighth for one larger. */
static size_t block_bytes(const struct ps_arena *a, size_t bytes)
{
    return bytes + bytes / 8 > a->block_size ? bytes + bytes / 8 : a->block_size;
}

void *ps_arena_alloc(struct ps_arena *a, size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (a->cur < a->count && a->used + bytes <= a->blocks[a->cur].size) {
        void *p = a->blocks[a->cur].mem + a->used;
        a->used += bytes;
        return p;
    }
    /* Move on to the next block (or the current one when nothing is in it yet). */
    int next = a->cur < a->count ? (a->used == 0 ? a->cur : a->cur + 1) : a->count;
    if (next < a->count && a->blocks[next].size < bytes) {
        /* Nothing in it since the reset: replace it by a block that fits, with an eighth to
         * spare. Skipping it instead would leave it idle and add a new block at the end in
         * every round whose large requests grew a little (integral volumes move the functions'
         * sizes between updates), so the arena would grow without bound. */
        size_t size = block_bytes(a, bytes);
        unsigned char *mem = malloc(size);
        if (!mem)
            return NULL;
        free(a->blocks[next].mem);
        a->blocks[next].mem = mem;
        a->blocks[next].size = size;
    }
    if (next >= a->count) {
        if (!insert_block(a, a->count, block_bytes(a, bytes)))
            return NULL;
        next = a->count - 1;
    }
    a->cur = next;
    a->used = bytes;
    return a->blocks[next].mem;
}

size_t ps_arena_footprint(const struct ps_arena *a)
{
    size_t total = 0;
    for (int i = 0; i < a->count; i++)
        total += a->blocks[i].size;
    return total;
}
