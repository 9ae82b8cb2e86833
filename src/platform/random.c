#include "platform/random.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int ps_random_bytes(void *buf, size_t len, struct ps_error *err)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ps_error_set(err, PS_EIO, "cannot open /dev/urandom: %s", strerror(errno));
    unsigned char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = read(fd, p + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            return ps_error_set(err, PS_EIO, "cannot read /dev/urandom: %s", strerror(e));
        }
        done += (size_t)n;
    }
    close(fd);
    return 0;
}
