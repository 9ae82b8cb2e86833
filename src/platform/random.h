/* random.h — cryptographically strong random bytes from the operating system. */
#ifndef PS_PLATFORM_RANDOM_H
#define PS_PLATFORM_RANDOM_H

#include <stddef.h>

#include "core/error.h"

/* Fills buf with len bytes read from /dev/urandom (which never blocks once the kernel pool is
 * initialised, and is what tokens need). Thread-safe. Errors: PS_EIO naming the reason. */
int ps_random_bytes(void *buf, size_t len, struct ps_error *err);

#endif
