#include "node/memory.h"

#include <stdlib.h>
#include <string.h>

/* qsort has no context argument; candidates carry what the order needs. */
struct candidate {
    size_t index;
    int64_t overdraft;
    const char *job_id;
};

static int cmp_candidate(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;
    if (x->overdraft != y->overdraft)
        return x->overdraft > y->overdraft ? -1 : 1;
    return strcmp(x->job_id, y->job_id);
}

size_t ps_node_overdraft_victims(const struct ps_node_memory_use *jobs, size_t count,
                                 int64_t node_memory_bytes, size_t *victims)
{
    if (node_memory_bytes <= 0 || count == 0)
        return 0;
    int64_t total = 0;
    for (size_t i = 0; i < count; i++)
        if (jobs[i].eligible && jobs[i].memory_bytes > 0)
            total += jobs[i].memory_bytes;
    if (total <= node_memory_bytes)
        return 0;
    struct candidate *c = malloc(count * sizeof *c);
    if (!c) {
        /* Without room to sort, the first eligible job over its reserve will do. */
        for (size_t i = 0; i < count; i++)
            if (jobs[i].eligible && jobs[i].reserve_bytes > 0 &&
                jobs[i].memory_bytes > jobs[i].reserve_bytes) {
                victims[0] = i;
                return 1;
            }
        return 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (jobs[i].eligible && jobs[i].reserve_bytes > 0 &&
            jobs[i].memory_bytes > jobs[i].reserve_bytes)
            c[n++] = (struct candidate){i, jobs[i].memory_bytes - jobs[i].reserve_bytes,
                                        jobs[i].job_id};
    qsort(c, n, sizeof *c, cmp_candidate);
    size_t v = 0;
    for (size_t k = 0; k < n && total > node_memory_bytes; k++) {
        victims[v++] = c[k].index;
        total -= jobs[c[k].index].memory_bytes;
    }
    free(c);
    return v;
}
