/* net.h — the server's listening socket: the one place the shells open one. */
#ifndef PS_PLATFORM_NET_H
#define PS_PLATFORM_NET_H

#include <stdint.h>

#include "core/error.h"

/* Opens a non-blocking, close-on-exec TCP socket listening on host (a numeric IPv4 or IPv6
 * address; an IPv6 socket takes IPv6 only) and port (0: any free port). *fd receives it and
 * *bound_port the port it got. Errors: PS_EINVAL for a host that is not a numeric address,
 * PS_EIO naming the address and strerror. */
int ps_net_listen(const char *host, uint16_t port, int *fd, uint16_t *bound_port,
                  struct ps_error *err);

#endif
