/* store_mirror.h — the leader's copy of its PostgreSQL store in memory, so that it keeps
 * answering reads while PostgreSQL is unreachable (docs/ha.md).
 *
 * Why: a failed commit is undone by rebuilding the state from the store (journal.c), which
 * needs the store. With PostgreSQL gone that rebuild fails and the state would be unusable. So
 * a scheduler on PostgreSQL keeps every object of its store also in an SQLite database in
 * memory (the mirror): filled from PostgreSQL at start, then given each batch the journal
 * committed, after the commit. When a commit fails because PostgreSQL is unreachable, the state
 * is rebuilt from the mirror — the last committed state, what a restart would load — and the
 * scheduler is "store down": reads answer from memory; every write is refused with 503
 * "storage unavailable" without trying PostgreSQL (the journal discards its batch and the
 * state is rebuilt from the mirror again); node heartbeats are refused (503) and nothing is
 * scheduled. Once a second the engine loop asks PostgreSQL (outside the state lock); when it
 * answers, the state is rebuilt from PostgreSQL itself (a commit whose answer was lost with
 * the connection may have happened there) and the mirror copied from it anew; changes still
 * queued from before are refused (they were made to the mirror's state), later ones commit.
 *
 * Locks: svc->mirror, store_down and store_up_from are guarded by svc->store_mu; store_down
 * changes only with svc->mu held too, so readers may hold either. Not used on SQLite, whose store is a
 * local file that reads work on. */
#ifndef PS_SERVER_STORE_MIRROR_H
#define PS_SERVER_STORE_MIRROR_H

#include <stdbool.h>

#include "core/error.h"

struct ps_service;
struct ps_store;

/* On PostgreSQL: creates svc->mirror, a copy of every object of svc->store. A no-op on SQLite.
 * Errors: the store's, PS_ENOMEM. */
int ps_store_mirror_open(struct ps_service *svc, struct ps_error *err);

/* Where the state is loaded from: the mirror while the store is down, else the store. Under
 * svc->mu. */
struct ps_store *ps_store_mirror_source(struct ps_service *svc);

/* After a failed commit (under svc->mu, store_mu not held): rebuilds the state from the store,
 * or from the mirror when the store is down, unreachable (the commit found it so) or its
 * rebuild fails for that reason; the store is then down. Returns ps_svc_state_reload's. */
int ps_store_mirror_roll_back(struct ps_service *svc, bool unreachable, struct ps_error *err);

/* The engine loop, under svc->mu, while the store is down (it calls at most once a second):
 * asks the store (svc->mu released meanwhile) and, when it answers, rebuilds the state and the
 * mirror from it. */
void ps_store_mirror_recover(struct ps_service *svc);

/* 0, or PS_EUNAVAIL "storage unavailable" while the store is down (for requests that would
 * write, e.g. heartbeats). Under svc->mu. */
int ps_store_mirror_writable(struct ps_service *svc, struct ps_error *err);

void ps_store_mirror_close(struct ps_service *svc);

#endif
