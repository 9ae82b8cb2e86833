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

void *ps_arena_alloc(struct ps_arena *a, size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (a->cur < a->count && a->used + bytes <= a->blocks[a->cur].size) {
        void *p = a->blocks[a->cur].mem + a->used;
        a->used += bytes;
        return p;
    }
    /* Move on to the next block that fits; a too small next block is skipped for this round. */
    int next = a->cur < a->count ? a->cur + 1 : a->count;
    while (next < a->count && a->blocks[next].size < bytes)
        next++;
    if (next >= a->count) {
        size_t size = bytes > a->block_size ? bytes : a->block_size;
        if (!insert_block(a, a->count, size))
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
