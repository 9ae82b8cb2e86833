/* daemon.h — what a long-running agent needs from its own process: to sleep until a deadline,
 * a child's exit or a stop signal; the host's name, CPU count and memory; the wall clock for
 * log lines.
 *
 * Signals are taken synchronously: ps_daemon_signals_block() blocks SIGCHLD, SIGTERM, SIGINT
 * and SIGHUP in the calling thread (call it first thing, before any thread exists, so that
 * every thread inherits the mask and none runs a handler) and ignores SIGPIPE; then
 * ps_daemon_wait() takes them one at a time with sigtimedwait. Children started later must
 * reset their mask (platform/job_process.c does). SIGCHLD is set to its default disposition, as
 * an inherited SIG_IGN would let the kernel reap the jobs before the agent sees how they ended.
 */
#ifndef PS_PLATFORM_DAEMON_H
#define PS_PLATFORM_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Blocks the signals above in the calling thread and ignores SIGPIPE. Errors: PS_EIO. */
int ps_daemon_signals_block(struct ps_error *err);

enum ps_daemon_event {
    PS_DAEMON_TIMEOUT = 0,      /* timeout_ms passed */
    PS_DAEMON_CHILD,            /* a child changed state (SIGCHLD) */
    PS_DAEMON_STOP,             /* SIGTERM, SIGINT or SIGHUP: stop cleanly */
};

/* Waits up to timeout_ms (0: just polls) for one of the blocked signals. */
enum ps_daemon_event ps_daemon_wait(int64_t timeout_ms);

/* The host name (gethostname), cut to size - 1 bytes; "localhost" when unknown. */
void ps_daemon_hostname(char *buf, size_t size);

/* Online CPUs (>= 1) and physical memory in bytes (0 when unknown). */
int ps_daemon_cpu_count(void);
int64_t ps_daemon_physical_memory_bytes(void);

/* Milliseconds since the Unix epoch (CLOCK_REALTIME), for log lines only. */
int64_t ps_daemon_wall_ms(void);

/* The process id, for log lines and default names. */
long ps_daemon_pid(void);

/* Creates path and its missing parents with mode (as mkdir -p); an existing directory is fine.
 * Errors: PS_EINVAL for an empty or too long path; PS_EIO naming the part that failed. */
int ps_daemon_make_dirs(const char *path, unsigned mode, struct ps_error *err);

/* True when the process runs as root (euid 0). */
bool ps_daemon_is_root(void);

/* The absolute path of the running executable (/proc/self/exe), for starting more of itself.
 * Errors: PS_EIO; PS_EINVAL when it does not fit in size bytes. */
int ps_daemon_self_exe(char *buf, size_t size, struct ps_error *err);

/* Creates a new directory from a template ending in XXXXXX (mkdtemp), in place, then gives it
 * mode (0755 when jobs running as another user must reach below it). Errors: PS_EIO naming the
 * path. */
int ps_daemon_make_temp_dir(char *template_path, unsigned mode, struct ps_error *err);

#endif
