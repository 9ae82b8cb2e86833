/* fd_limit.h — the process's limit on open file descriptors.
 *
 * A server holds one descriptor per client connection: with the usual soft limit of 1024 a few
 * hundred idle clients exhaust it long before any connection limit of the server applies. */
#ifndef PS_PLATFORM_FD_LIMIT_H
#define PS_PLATFORM_FD_LIMIT_H

#include <stdint.h>

/* Raises the soft RLIMIT_NOFILE to the hard limit (never lowers it) and returns the soft limit
 * in force afterwards (0 when it cannot be read; UINT64_MAX when unlimited). */
uint64_t ps_fd_limit_raise(void);

#endif
