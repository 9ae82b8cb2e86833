#include "sim/event_queue.h"

#include <stdlib.h>

#include "core/error.h"

static bool earlier(const struct ps_event *x, const struct ps_event *y)
{
    if (x->time_ms != y->time_ms)
        return x->time_ms < y->time_ms;
    if (x->prio != y->prio)
        return x->prio < y->prio;
    return x->seq < y->seq;
}

void ps_event_queue_init(struct ps_event_queue *q)
{
    q->heap = NULL;
    q->count = 0;
    q->capacity = 0;
    q->next_seq = 0;
}

void ps_event_queue_release(struct ps_event_queue *q)
{
    free(q->heap);
    ps_event_queue_init(q);
}

int ps_event_queue_push(struct ps_event_queue *q, int64_t time_ms, int type, int64_t a, int64_t b)
{
    return ps_event_queue_push_prio(q, time_ms, 0, type, a, b);
}

int ps_event_queue_push_prio(struct ps_event_queue *q, int64_t time_ms, int prio, int type, int64_t a,
                             int64_t b)
{
    if (q->count == q->capacity) {
        int64_t capacity = q->capacity ? q->capacity * 2 : 256;
        struct ps_event *heap = realloc(q->heap, (size_t)capacity * sizeof *heap);
        if (!heap)
            return PS_ENOMEM;
        q->heap = heap;
        q->capacity = capacity;
    }
    struct ps_event ev = {.time_ms = time_ms, .seq = q->next_seq++, .type = type, .prio = prio,
                          .a = a, .b = b};
    int64_t i = q->count++;
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!earlier(&ev, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = ev;
    return 0;
}

bool ps_event_queue_pop(struct ps_event_queue *q, struct ps_event *out)
{
    if (q->count == 0)
        return false;
    *out = q->heap[0];
    struct ps_event last = q->heap[--q->count];
    int64_t i = 0;
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= q->count)
            break;
        if (child + 1 < q->count && earlier(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!earlier(&q->heap[child], &last))
            break;
        q->heap[i] = q->heap[child];
        i = child;
    }
    if (q->count > 0)
        q->heap[i] = last;
    return true;
}

const struct ps_event *ps_event_queue_peek(const struct ps_event_queue *q)
{
    return q->count ? &q->heap[0] : NULL;
}
