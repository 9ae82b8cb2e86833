#include "sim/event_queue.h"

#include <stdlib.h>

#include "core/error.h"

#define ARITY 4
#define SEQ_BITS 56

/* order: prio in the top bits above seq, so one comparison settles a tie in time. */
struct ps_event_key {
    int64_t time_ms;
    uint64_t order;
    int64_t slot;
};

static bool earlier(const struct ps_event_key *x, const struct ps_event_key *y)
{
    return x->time_ms != y->time_ms ? x->time_ms < y->time_ms : x->order < y->order;
}

void ps_event_queue_init(struct ps_event_queue *q)
{
    q->heap = NULL;
    q->slots = NULL;
    q->count = 0;
    q->capacity = 0;
    q->free_head = -1;
    q->next_seq = 0;
}

void ps_event_queue_release(struct ps_event_queue *q)
{
    free(q->heap);
    free(q->slots);
    ps_event_queue_init(q);
}

int ps_event_queue_push(struct ps_event_queue *q, int64_t time_ms, int type, int64_t a, int64_t b)
{
    return ps_event_queue_push_prio(q, time_ms, 0, type, a, b);
}

static int grow(struct ps_event_queue *q)
{
    int64_t capacity = q->capacity ? q->capacity * 2 : 256;
    struct ps_event_key *heap = realloc(q->heap, (size_t)capacity * sizeof *heap);
    if (!heap)
        return PS_ENOMEM;
    q->heap = heap;
    struct ps_event *slots = realloc(q->slots, (size_t)capacity * sizeof *slots);
    if (!slots)
        return PS_ENOMEM;
    q->slots = slots;
    for (int64_t s = capacity - 1; s >= q->capacity; s--) {
        slots[s].seq = (uint64_t)q->free_head;
        q->free_head = s;
    }
    q->capacity = capacity;
    return 0;
}

/* tie: the order among events of equal time and prio; NO_TIE: push order */
#define NO_TIE UINT64_MAX

static int push(struct ps_event_queue *q, int64_t time_ms, int prio, uint64_t tie, int type,
                int64_t a, int64_t b)
{
    if (prio < 0 || prio > PS_EVENT_PRIO_MAX || q->next_seq >> SEQ_BITS ||
        (tie != NO_TIE && tie >> SEQ_BITS))
        return PS_EINVAL;
    if (q->count == q->capacity && grow(q) != 0)
        return PS_ENOMEM;
    int64_t slot = q->free_head;
    q->free_head = (int64_t)q->slots[slot].seq;
    uint64_t seq = q->next_seq++;
    q->slots[slot] = (struct ps_event){.time_ms = time_ms, .seq = seq, .type = type, .prio = prio,
                                       .a = a, .b = b};
    struct ps_event_key key = {time_ms, (uint64_t)prio << SEQ_BITS | (tie == NO_TIE ? seq : tie),
                               slot};
    int64_t i = q->count++;
    while (i > 0) {
        int64_t parent = (i - 1) / ARITY;
        if (!earlier(&key, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = key;
    return 0;
}

int ps_event_queue_push_prio(struct ps_event_queue *q, int64_t time_ms, int prio, int type, int64_t a,
                             int64_t b)
{
    return push(q, time_ms, prio, NO_TIE, type, a, b);
}

int ps_event_queue_push_ordered(struct ps_event_queue *q, int64_t time_ms, int prio, uint64_t tie,
                                int type, int64_t a, int64_t b)
{
    return push(q, time_ms, prio, tie, type, a, b);
}

/* The earliest of the children of i (ARITY * i + 1 ...), or -1 when it has none. */
static int64_t least_child(const struct ps_event_queue *q, int64_t i)
{
    int64_t first = ARITY * i + 1;
    if (first >= q->count)
        return -1;
    int64_t end = first + ARITY < q->count ? first + ARITY : q->count;
    int64_t best = first;
    for (int64_t c = first + 1; c < end; c++)
        if (earlier(&q->heap[c], &q->heap[best]))
            best = c;
    return best;
}

bool ps_event_queue_pop(struct ps_event_queue *q, struct ps_event *out)
{
    if (q->count == 0)
        return false;
    int64_t slot = q->heap[0].slot;
    *out = q->slots[slot];
    q->slots[slot].seq = (uint64_t)q->free_head;
    q->free_head = slot;
    struct ps_event_key last = q->heap[--q->count];
    int64_t i = 0;
    for (;;) {
        int64_t child = least_child(q, i);
        if (child < 0 || !earlier(&q->heap[child], &last))
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
    return q->count ? &q->slots[q->heap[0].slot] : NULL;
}
