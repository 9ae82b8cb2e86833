/* sandbox.h — a job's working directory <work_dir>/sandbox/<job_id>, its optional tmpfs at
 * <sandbox>/tmpfs, and their removal.
 *
 * The sandbox belongs to the job's user (chown when the agent is root and the job runs as
 * another user), mode 0700: with a uid per slot (job_runner.h slot_uid_base) no other job can
 * enter it. The tmpfs is a plain mount in the agent's mount namespace (nosuid,nodev, size=...,
 * mode 0700, owned by the job's user), so the agent can see what the job left
 * there; it needs root (CAP_SYS_ADMIN), and without it ps_sandbox_mount_tmpfs says so.
 *
 * Removal never follows symlinks the job may have planted and never crosses into another file
 * system: it walks with openat(O_NOFOLLOW) and unlinkat, and unmounts <sandbox>/tmpfs first.
 * Kill the job's processes before removing, or they may keep creating files.
 */
#ifndef PS_PLATFORM_SANDBOX_H
#define PS_PLATFORM_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

/* Creates <work_dir>/sandbox (0755, if missing) and <work_dir>/sandbox/<job_id> (0700, must
 * not exist: a leftover is removed first) and writes its path to path (size bytes). When
 * chown_to is true the sandbox is chowned to uid:gid. job_id: 1..128 of [A-Za-z0-9._-].
 * Errors: PS_EINVAL for a bad job_id or a path that does not fit; PS_EIO with the failing
 * call, path and strerror. */
int ps_sandbox_create(const char *work_dir, const char *job_id, bool chown_to, uid_t uid,
                      gid_t gid, char *path, size_t size, struct ps_error *err);

/* Mounts a tmpfs of size_bytes at <sandbox>/tmpfs (created, owned by uid:gid through the mount
 * options). Errors: PS_EINVAL for size_bytes <= 0; PS_EPERM when not permitted ("mount tmpfs at
 * <path>: Operation not permitted (needs root)"); PS_EIO otherwise. */
int ps_sandbox_mount_tmpfs(const char *sandbox, int64_t size_bytes, uid_t uid, gid_t gid,
                           struct ps_error *err);

/* Unmounts <sandbox>/tmpfs if something is mounted there (lazily, MNT_DETACH, so a process
 * still using it cannot block the node). 0 when nothing was mounted. PS_EIO on failure. */
int ps_sandbox_unmount_tmpfs(const char *sandbox, struct ps_error *err);

/* Unmounts the tmpfs and removes the sandbox with everything in it. A missing sandbox is not
 * an error. Errors: PS_EIO naming the first path that could not be removed. */
int ps_sandbox_remove(const char *sandbox, struct ps_error *err);

/* ---------------------------------------------------------------------------------------------
 * Reuse of emptied sandboxes
 *
 * Why: on a disk file system a directory made and removed per job costs an inode allocation
 * each time, and ext4 without a journal skips every inode freed in the last seconds while it
 * looks for a free one, so at hundreds of jobs per second that search became the largest cost
 * of a short job (docs/performance.md, e2e). A released sandbox is emptied as before (the same
 * walk as ps_sandbox_remove) and parked as <work_dir>/sandbox/+free-<n> ('+' cannot occur in a
 * job id); the next job's sandbox is that directory renamed, chmod 0700 and chowned like a new
 * one. Before emptying, the directory is given back to the agent's user (the job's user can no
 * longer add entries to it), so a parked directory stays empty. Nothing else carries over: the
 * directory is empty, and its mode and owner are set again. Not thread-safe (one per agent).
 * ------------------------------------------------------------------------------------------- */

struct ps_sandbox_pool;

/* A pool of up to capacity (0..256) parked sandboxes under <work_dir>/sandbox; leftovers of an
 * earlier agent (+free-*) are removed. Errors: PS_EINVAL, PS_ENOMEM, PS_EIO (a leftover could
 * not be removed). */
int ps_sandbox_pool_new(const char *work_dir, int capacity, struct ps_sandbox_pool **out,
                        struct ps_error *err);

/* Removes the parked directories and frees. NULL is a no-op. */
void ps_sandbox_pool_free(struct ps_sandbox_pool *pool);

/* ps_sandbox_create, taking a parked directory when pool has one (pool NULL: plain create). */
int ps_sandbox_acquire(struct ps_sandbox_pool *pool, const char *work_dir, const char *job_id,
                       bool chown_to, uid_t uid, gid_t gid, char *path, size_t size,
                       struct ps_error *err);

/* ps_sandbox_remove, parking the emptied directory when pool has room (pool NULL: plain
 * remove). Same errors; a directory that cannot be emptied is not parked. */
int ps_sandbox_release(struct ps_sandbox_pool *pool, const char *sandbox, struct ps_error *err);

#endif
