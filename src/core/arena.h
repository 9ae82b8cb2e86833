/* arena.h — a bump allocator made of stable blocks, reset between uses.
 *
 * Memory handed out never moves, so views into it stay valid until the next reset. Blocks are
 * kept across resets: once an arena has grown to a workload, later uses do not allocate.
 */
#ifndef PS_CORE_ARENA_H
#define PS_CORE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct ps_arena_block {
    unsigned char *mem;
    size_t size;
};

struct ps_arena {
    struct ps_arena_block *blocks;
    int count;       /* blocks allocated */
    int cap;
    int cur;         /* block being filled */
    size_t used;     /* bytes used in blocks[cur] */
    size_t block_size;
};

void ps_arena_init(struct ps_arena *a, size_t block_size);
void ps_arena_release(struct ps_arena *a);
/* Forgets every allocation; keeps the memory. */
void ps_arena_reset(struct ps_arena *a);
/* 16-byte aligned memory for bytes (> 0), or NULL when out of memory. */
void *ps_arena_alloc(struct ps_arena *a, size_t bytes);
/* Bytes held by the arena (for memory accounting). */
size_t ps_arena_footprint(const struct ps_arena *a);

#endif
