/* journal.h — group commit (journal.c): records appended under svc->mu, committed to the store
 * by a writer thread; a handler waits for its ticket outside the lock before it answers. A
 * failed commit is discarded whole and the state rebuilt from the store (persist.h). */
#ifndef PS_SERVER_JOURNAL_H
#define PS_SERVER_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_journal;

int ps_journal_new(struct ps_service *svc, struct ps_journal **out, struct ps_error *err);
void ps_journal_free(struct ps_journal *j);           /* flushes and joins */
/* Appends a put (value owned: stolen) or, with value NULL, a delete. Returns the ticket. */
uint64_t ps_journal_put(struct ps_journal *j, const char *kind, const char *key, json_t *value);
/* A put of JSON text already built (owned: stolen); NULL text (out of memory) fails the batch
 * like a failed commit. */
uint64_t ps_journal_put_text(struct ps_journal *j, const char *kind, const char *key, char *text);
uint64_t ps_journal_last(struct ps_journal *j);       /* ticket of the last record */
/* A put no reply rests on (the event log's rows): committed as any other, but not counted by
 * ps_journal_relied, so a long-poll heartbeat whose only records are these is still held.
 * value (owned: stolen; NULL: a delete) is dumped to text by the journal's writer, off the
 * state lock: it must share no part that another thread may change (build it of copies). */
uint64_t ps_journal_put_aside(struct ps_journal *j, const char *kind, const char *key,
                              json_t *value);
/* A put aside whose text the journal's render thread makes from ctx, a copy of what it needs
 * taken under the state lock, off every lock: text(ctx) returns it (malloc'd JSON; NULL: out
 * of memory, the record is dropped), and drop(ctx) frees ctx, once, whether or not text was
 * called. The record is queued when its text is made: after the records appended meanwhile,
 * which neither wait for it nor commit with it (a big event log row holds no heartbeat back).
 * So it is the one record that may land after later ones, or not at all (a crash first, a
 * failed commit discarding the queue, or a later record of the same key, which cancels it).
 * Returns the last ticket handed out: it has none of its own. */
struct ps_journal_renderer {
    char *(*text)(void *ctx);
    void (*drop)(void *ctx);
};
uint64_t ps_journal_put_aside_rendered(struct ps_journal *j, const char *kind, const char *key,
                                       const struct ps_journal_renderer *render, void *ctx);
/* How many records a reply may rest on (every put but ps_journal_put_aside's) were appended,
 * ever: unchanged across a request, its reply rests on nothing it appended. */
uint64_t ps_journal_relied(struct ps_journal *j);
/* Whether records that only refresh derived state (the engine loop's integral volumes and
 * starvation timers) should be appended now: always while commits succeed; after a failed
 * commit (full disk), once per PS_JOURNAL_REFRESH_PROBE_MS, since every failed commit makes
 * the journal reload the state. */
#define PS_JOURNAL_REFRESH_PROBE_MS 10000
bool ps_journal_refresh_due(struct ps_journal *j, int64_t now_ms);
/* Every ticket <= this is settled: durable, or discarded by a failed commit, in which case the
 * state was reloaded from the store before this moved past it (so nothing in memory waits for
 * a discarded ticket any more). */
uint64_t ps_journal_committed(struct ps_journal *j);
/* Waits until the record with this ticket (and every earlier one) is settled. Returns 0 when it
 * is durable; PS_ENOSPC (disk full) or PS_EUNAVAIL (other storage failure) when its commit
 * failed: then the change was discarded, in memory too (journal.c). */
int ps_journal_wait(struct ps_journal *j, uint64_t ticket, struct ps_error *err);

#endif
