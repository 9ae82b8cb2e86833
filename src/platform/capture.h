/* capture.h — a job's stdout and stderr, captured through pipes into files with a size cap.
 *
 * Why pipes and a reader thread rather than handing the job the files themselves: a file the
 * job writes directly can only be capped with RLIMIT_FSIZE, which kills the job (SIGXFSZ) and
 * limits every file it writes, not just its output. A reader that the agent owns can keep what
 * matters and drop the rest while the job never blocks or dies for talking too much.
 *
 * What is kept, per stream with cap C (YTsaurus keeps the head and the tail of stderr too):
 * - up to C bytes: everything, written to the file as it arrives (readable while the job runs);
 * - beyond C: the first C - C/2 bytes, then the line
 *       "\n[poolsched: N bytes of <stream> skipped]\n"
 *   then the last C/2 bytes. While the job runs the file holds its first C bytes; the final
 *   head + marker + tail layout is written when the capture finishes. So the file is at most
 *   C + ~60 bytes. The tail is a ring buffer of C/2 bytes in memory, allocated on overflow.
 *
 * One thread per process reads the pipes of every capture through one epoll set, one read per
 * ready pipe per round (a chatty job cannot starve the others); a thread per job cost a clone,
 * an 8 MiB stack mapping and its unmapping per job (docs/performance.md, e2e). It starts with
 * the first capture and runs until the process exits.
 * A stream's file is created by the reader on
 * the stream's first byte, not before: most short jobs write nothing, and a file created and
 * unlinked per job is a real cost on disk file systems (docs/performance.md, e2e). Creation is
 * O_EXCL|O_NOFOLLOW, so a symlink planted in the sandbox cannot redirect it; when the name is
 * taken (the job made a file of that name first) the file is <path>.1 .. <path>.9 instead. The
 * files are read back through the capture's own descriptors, never by path.
 */
#ifndef PS_PLATFORM_CAPTURE_H
#define PS_PLATFORM_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

enum ps_capture_stream {
    PS_CAPTURE_STDOUT = 0,
    PS_CAPTURE_STDERR = 1,
};

struct ps_capture;

/* Creates two pipes and hands them to the capture loop (started on first use); the files (mode 0644) follow on first output.
 * *stdout_fd and *stderr_fd receive the pipes' write ends (close-on-exec) for the child to dup;
 * the caller closes them once the child has them (or on failure). cap_bytes >= 0 per stream.
 * Errors: PS_EINVAL for a negative cap; PS_EIO naming the call and path; PS_ENOMEM. */
int ps_capture_start(const char *stdout_path, int64_t stdout_cap_bytes, const char *stderr_path,
                     int64_t stderr_cap_bytes, int *stdout_fd, int *stderr_fd,
                     struct ps_capture **out, struct ps_error *err);

/* Waits up to timeout_ms for both pipes to reach end of file (every writer gone), then stops
 * reading — taking whatever is still buffered in the pipes, up to 1 MiB each — and writes the final head +
 * marker + tail layout. Idempotent. Returns 0, or PS_EIO when writing a file failed (the first
 * error of the capture, e.g. "write(<path>): No space left on device"). */
int ps_capture_finish(struct ps_capture *c, int timeout_ms, struct ps_error *err);

/* Bytes the job wrote to the stream so far (kept or not). */
int64_t ps_capture_total_bytes(struct ps_capture *c, enum ps_capture_stream s);

/* Whether the stream exceeded its cap. */
bool ps_capture_truncated(struct ps_capture *c, enum ps_capture_stream s);

/* The stream's file as it is now (see above; "" while there is none) in *data (malloc'ed, NUL-terminated, *len without
 * the NUL; free it). Errors: PS_EIO, PS_ENOMEM. */
int ps_capture_read(struct ps_capture *c, enum ps_capture_stream s, char **data, size_t *len,
                    struct ps_error *err);

/* Finishes (timeout 0) if needed, closes everything. The files stay. NULL is
 * a no-op. */
void ps_capture_free(struct ps_capture *c);

#endif
