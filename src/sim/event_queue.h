/* event_queue.h — the simulator's virtual-time event queue.
 *
 * A binary min-heap of events ordered by (time_ms, seq): events at the same virtual instant pop
 * in the order they were pushed, so a simulation is deterministic whatever the heap layout.
 */
#ifndef PS_SIM_EVENT_QUEUE_H
#define PS_SIM_EVENT_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

struct ps_event {
    int64_t time_ms;
    uint64_t seq;      /* assigned by push: the tie-breaker */
    int type;          /* the simulator's event kind */
    int64_t a;         /* payload: meaning depends on type (e.g. node index, job index) */
    int64_t b;
};

struct ps_event_queue {
    struct ps_event *heap;
    int64_t count;
    int64_t capacity;
    uint64_t next_seq;
};

void ps_event_queue_init(struct ps_event_queue *q);
void ps_event_queue_release(struct ps_event_queue *q);

/* Adds an event; returns 0 or PS_ENOMEM. */
int ps_event_queue_push(struct ps_event_queue *q, int64_t time_ms, int type, int64_t a, int64_t b);

/* Removes the earliest event into *out; false when the queue is empty. */
bool ps_event_queue_pop(struct ps_event_queue *q, struct ps_event *out);

/* The earliest event without removing it, or NULL; valid until the next push or pop. */
const struct ps_event *ps_event_queue_peek(const struct ps_event_queue *q);

#endif
