#include "platform/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Fills ss with host:port; returns its length, 0 when host is not a numeric address. */
static socklen_t parse_address(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *sin = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons(port);
        return sizeof *sin;
    }
    if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(port);
        return sizeof *sin6;
    }
    return 0;
}

int ps_net_listen(const char *host, uint16_t port, int *fd_out, uint16_t *bound_port,
                  struct ps_error *err)
{
    struct sockaddr_storage ss;
    socklen_t len = parse_address(host, port, &ss);
    if (len == 0)
        return ps_error_set(err, PS_EINVAL, "listen host '%s' is not a numeric address", host);
    int family = ss.ss_family;
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return ps_error_set(err, PS_EIO, "cannot create a socket for %s:%u: %s", host,
                            (unsigned)port, strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, SOMAXCONN) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, PS_EIO, "cannot listen on %s%s%s:%u: %s",
                            family == AF_INET6 ? "[" : "", host, family == AF_INET6 ? "]" : "",
                            (unsigned)port, strerror(e));
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, PS_EIO, "cannot read the port bound on %s: %s", host,
                            strerror(e));
    }
    *bound_port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
                                          : ((struct sockaddr_in6 *)&bound)->sin6_port);
    *fd_out = fd;
    return 0;
}
