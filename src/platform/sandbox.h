/* sandbox.h — a job's working directory <work_dir>/sandbox/<job_id>, its optional tmpfs at
 * <sandbox>/tmpfs, and their removal.
 *
 * The sandbox belongs to the job's user (chown when the agent is root and the job runs as
 * another user), mode 0755. The tmpfs is a plain mount in the agent's mount namespace
 * (nosuid,nodev, size=..., owned by the job's user), so the agent can see what the job left
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

/* Creates <work_dir>/sandbox (0755, if missing) and <work_dir>/sandbox/<job_id> (0755, must
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

#endif
