/* instance_lock.h — which agent instances are alive, machine-wide, by flock.
 *
 * Each agent instance holds an exclusive flock(2) on <dir>/<name>.lock for its whole life, name
 * being its node cgroup's name (poolsched-<node_id>-<instance_id>). The kernel drops the lock
 * when the last descriptor of it closes, so a kill -9 frees it too (the job guard, a child of
 * the agent, shares the descriptor and holds it until its sweep is over). A starting agent that
 * finds an earlier instance's cgroup removes it only when it can take that instance's lock: a
 * live agent idle between jobs has an empty node cgroup that is not a leftover.
 *
 * The directory is machine-wide so that agents of different clusters see each other:
 * /run/poolsched when it exists or can be created and is writable, else /tmp/poolsched-locks
 * (sticky, world-writable, so agents of several users can share it). */
#ifndef PS_PLATFORM_INSTANCE_LOCK_H
#define PS_PLATFORM_INSTANCE_LOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* The lock directory (see above), created when missing; "" when none is usable. */
const char *ps_instance_lock_dir(void);

/* Takes the lock <dir>/<name>.lock, creating the file (and dir, mode 0755) when missing.
 * *fd: the descriptor that holds it (close-on-exec). Errors: PS_ESTATE when another process
 * holds it, PS_EIO naming the path. */
int ps_instance_lock_take(const char *dir, const char *name, int *fd, struct ps_error *err);

/* Whether the instance that owns <dir>/<name>.lock is dead: true when the file is missing (a
 * leftover of an agent from before locks) or its lock can be taken; then *fd holds it (or is
 * -1) until ps_instance_lock_drop. False when a live process holds it, or on any doubt (an
 * unreadable file). */
bool ps_instance_lock_dead(const char *dir, const char *name, int *fd);

/* Releases a lock from take or dead; with remove, unlinks its file first. fd -1: no-op. */
void ps_instance_lock_drop(const char *dir, const char *name, int fd, bool remove);

/* Removes the lock files <prefix><16 hex>.lock in dir (but not keep.lock) whose
 * lock is free: those of dead instances whose cgroups are already gone (the guard removed them
 * after a kill -9). A file being made by a starting agent is safe: take checks that the file it
 * locked is still there. */
void ps_instance_lock_sweep(const char *dir, const char *prefix, const char *keep);

#endif
