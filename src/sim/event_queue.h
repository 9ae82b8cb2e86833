/* event_queue.h — the simulator's virtual-time event queue.
 *
 * A min-heap of events ordered by (time_ms, prio, seq): at the same virtual instant events of a
 * lower priority value pop first (the simulator uses it to settle job ends before node
 * heartbeats of the same millisecond), and events of equal priority pop in the order they were
 * pushed. The order is total (seq is unique), so a simulation is deterministic whatever the
 * heap layout.
 *
 * Layout: a 4-ary heap of small keys (time, prio and seq packed, and the event's slot) over a
 * slot array holding the events; a pop walks half the levels of a binary heap and touches a
 * cache line per level (the simulator pops millions of events from heaps of ~10^4).
 */
#ifndef PS_SIM_EVENT_QUEUE_H
#define PS_SIM_EVENT_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

/* prio is in [0, PS_EVENT_PRIO_MAX]; push refuses others (PS_EINVAL). */
#define PS_EVENT_PRIO_MAX 255

struct ps_event {
    int64_t time_ms;
    uint64_t seq;      /* assigned by push: the tie-breaker */
    int type;          /* the simulator's event kind */
    int prio;          /* lower pops first at equal time; ps_event_queue_push uses 0 */
    int64_t a;         /* payload: meaning depends on type (e.g. node index, job index) */
    int64_t b;
};

struct ps_event_key;   /* event_queue.c */

struct ps_event_queue {
    struct ps_event_key *heap;
    struct ps_event *slots;   /* the events; a free slot's seq links the free list */
    int64_t count;
    int64_t capacity;
    int64_t free_head;        /* -1: none */
    uint64_t next_seq;
};

void ps_event_queue_init(struct ps_event_queue *q);
void ps_event_queue_release(struct ps_event_queue *q);

/* Adds an event with priority 0; returns 0 or PS_ENOMEM. */
int ps_event_queue_push(struct ps_event_queue *q, int64_t time_ms, int type, int64_t a, int64_t b);

/* Adds an event with priority prio; returns 0, PS_EINVAL (prio out of range) or PS_ENOMEM. */
int ps_event_queue_push_prio(struct ps_event_queue *q, int64_t time_ms, int prio, int type, int64_t a,
                             int64_t b);

/* Adds an event with priority prio ordered among the events of its time and priority by tie
 * (< 2^56) instead of push order: for a priority whose events all come this way, e.g. the
 * simulator's node heartbeats by node index. Equal ties pop in no set order. Returns as
 * ps_event_queue_push_prio. */
int ps_event_queue_push_ordered(struct ps_event_queue *q, int64_t time_ms, int prio, uint64_t tie,
                                int type, int64_t a, int64_t b);

/* Removes the earliest event into *out; false when the queue is empty. */
bool ps_event_queue_pop(struct ps_event_queue *q, struct ps_event *out);

/* The earliest event without removing it, or NULL; valid until the next push or pop. */
const struct ps_event *ps_event_queue_peek(const struct ps_event_queue *q);

#endif
